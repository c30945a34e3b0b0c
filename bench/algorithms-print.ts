import type { AlgorithmResult } from './algorithms';
import { aepoClaims } from './algorithms-claims';
import { CellSummary, summarise } from './algorithms-summary';
import { Column, Row, available, keyId, runKey } from './algorithms-table';

import { num, pct } from './algorithms-summary';

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
    s.firstWarnings.join('; '),
  ];
}

const HEADER = ['eval success % (min–max)', 'after warm-up %', 'pass@k %', 'distinct action seqs / prompt', 'entropy start / mid / end', 'branches / prompt', 'tool calls / episode', 'wall time / run', 'first collapse warning, per seed'];

/**
 * Prints the table as Markdown, a line per environment and preset and the random agent (and
 * FrozenLake's optimal policy) on the same evaluation seeds, then AEPO's claims. A preset this
 * code does not have shows "–", a cell not trained yet "…", a series a run did not report "–".
 */
export function printAlgorithmsTable(rows: readonly Row[], columns: readonly Column[], seeds: readonly number[], steps: number | undefined, results: readonly AlgorithmResult[]): void {
  const byId = new Map(results.map((r) => [r.id, r]));
  const summaries = new Map<string, CellSummary | undefined>();
  console.log(
    `\nEval success after RL under RAGEN's protocol (256 seeds, temperature 0.5), mean (min–max) over seeds ${seeds.join(', ')}; ` +
      'pass@k (k = group size) over the last tenth of the steps; entropy/mean over the first, middle and last tenth; the other series are means over the steps',
  );
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
  console.log("\nAEPO's claims, here:");
  for (const row of rows) {
    for (const { claim, verdict, detail } of aepoClaims((preset) => summaries.get(`${row.name}/${preset}`))) {
      console.log(`* ${row.label}: ${claim}: ${verdict}${detail ? ` — ${detail}` : ''}`);
    }
  }
}
