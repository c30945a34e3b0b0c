import type { AlgorithmResult } from './algorithms';
import { CellSummary, summarise } from './algorithms-summary';
import { Column, Row, available, keyId, runKey } from './algorithms-table';

const pct = (x: number) => (100 * x).toFixed(1);
const num = (x: number | undefined, digits = 2) => (x === undefined ? '–' : x.toFixed(digits));

function cells(s: CellSummary, seedsWanted: number): string[] {
  const { success, entropy } = s;
  const partial = s.seeds < seedsWanted ? `, ${s.seeds} of ${seedsWanted} seeds` : '';
  return [
    `${pct(success.mean)} (${pct(success.min)}–${pct(success.max)}${partial})`,
    pct(s.afterWarmup),
    s.passAtK === undefined ? '–' : pct(s.passAtK),
    num(s.distinct, 1),
    entropy ? `${num(entropy.start)} / ${num(entropy.mid)} / ${num(entropy.end)} (late std ${num(entropy.lateStd, 3)})` : '–',
    num(s.branches, 1),
    s.toolCalls === undefined ? '–' : `${num(s.toolCalls)} (${pct(s.toolSuccess ?? 0)}% ran)`,
    `${s.minutes.toFixed(1)} min`,
  ];
}

const HEADER = ['eval success % (min–max)', 'after warm-up %', 'pass@k %', 'distinct action seqs / prompt', 'entropy start / mid / end', 'branches / prompt', 'tool calls / episode', 'wall time / run'];

/**
 * Prints the table as Markdown, a line per environment and preset and the random agent (and
 * FrozenLake's optimal policy) on the same evaluation seeds, then AEPO's claims. A preset this
 * code does not have shows "–", a cell not trained yet "…", a series a run did not report "–".
 */
export function printAlgorithmsTable(rows: readonly Row[], columns: readonly Column[], seeds: readonly number[], steps: number | undefined, results: readonly AlgorithmResult[]): void {
  const byId = new Map(results.map((r) => [r.id, r]));
  const summaries = new Map<string, CellSummary | undefined>();
  console.log(`\nEval success under RAGEN's protocol (256 seeds, temperature 0.5) after RL; seeds ${seeds.join(', ')}; series over the RL steps`);
  console.log(`| environment | steps | algorithm | ${HEADER.join(' | ')} |`);
  console.log(`|---|---|---|${HEADER.map(() => '---|').join('')}`);
  for (const row of rows) {
    const budget = steps ?? row.steps;
    let any: AlgorithmResult | undefined;
    for (const column of columns) {
      const line = (values: string[]) => console.log(`| ${row.label} | ${budget} | ${column.label} | ${values.join(' | ')} |`);
      if (!available(column)) {
        line(HEADER.map(() => '–'));
        continue;
      }
      const found = seeds.map((seed) => byId.get(keyId(runKey(row, column, seed, steps)))).filter((r): r is AlgorithmResult => r !== undefined);
      any ??= found[0];
      const summary = summarise(found);
      summaries.set(`${row.name}/${column.name}`, summary);
      line(summary ? cells(summary, seeds.length) : HEADER.map(() => '…'));
    }
    const blank = HEADER.slice(1).map(() => '');
    console.log(`| ${row.label} | | random agent | ${any ? pct(any.random) : '…'} | ${blank.join(' | ')} |`);
    if (any?.optimal != null) console.log(`| ${row.label} | | optimal policy | ${pct(any.optimal)} | ${blank.join(' | ')} |`);
  }
  printClaims(rows, (row, preset) => summaries.get(`${row.name}/${preset}`));
}

type Verdict = 'holds' | 'does not hold' | 'partly';

/** AEPO's three claims (Dong et al. 2025), each judged per environment from the table's cells. */
function printClaims(rows: readonly Row[], cell: (row: Row, preset: string) => CellSummary | undefined): void {
  console.log("\nAEPO's claims, here:");
  for (const row of rows) {
    const aepo = cell(row, 'aepo');
    const arpo = cell(row, 'arpo');
    const grpo = cell(row, 'starpo-grpo');
    const say = (claim: string, verdict: Verdict | undefined, detail = '') => console.log(`* ${row.label}: ${claim}: ${verdict ?? 'not measured'}${verdict ? ` — ${detail}` : ''}`);

    const diverse = aepo?.distinct !== undefined && arpo?.distinct !== undefined;
    say(
      'more diverse rollouts than ARPO (paper: sampling clusters 54 → 62)',
      diverse ? (aepo.distinct! > arpo.distinct! ? 'holds' : 'does not hold') : undefined,
      diverse ? `distinct action sequences per prompt ${num(aepo.distinct, 2)} (AEPO) vs ${num(arpo.distinct, 2)} (ARPO)` : '',
    );

    const a = aepo?.entropy;
    const b = arpo?.entropy;
    const steadier = a && b ? a.lateStd < b.lateStd : false;
    const higher = a && b ? a.end >= b.end : false;
    say(
      "entropy stays high and stable while ARPO's fluctuates late",
      a && b ? (steadier && higher ? 'holds' : steadier || higher ? 'partly' : 'does not hold') : undefined,
      a && b ? `end entropy ${num(a.end)} vs ${num(b.end)}, std over the second half ${num(a.lateStd, 3)} vs ${num(b.lateStd, 3)} (AEPO vs ARPO)` : '',
    );

    const gap = aepo && grpo ? 100 * (aepo.success.mean - grpo.success.mean) : undefined;
    say(
      'about 5 points more accuracy than GRPO',
      gap === undefined ? undefined : gap >= 5 ? 'holds' : gap > 0 ? 'partly' : 'does not hold',
      aepo && grpo
        ? `eval success ${pct(aepo.success.mean)} (${pct(aepo.success.min)}–${pct(aepo.success.max)}) vs ${pct(grpo.success.mean)} (${pct(grpo.success.min)}–${pct(grpo.success.max)}): ${gap! >= 0 ? '+' : ''}${gap!.toFixed(1)} points` +
            (aepo.success.min <= grpo.success.max && grpo.success.min <= aepo.success.max ? ', within the seeds’ spread' : '')
        : '',
    );
  }
}
