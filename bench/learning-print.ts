import type { EnvDefinition } from '../src/training/envs/types';
import { formatCell, percent, summariseCell } from '../src/training/experiment/cells';
import type { LearningResult } from './learning';
import { outcomeOf } from './runs';
import { Column, RAGEN_SFT, RAGEN_STARPO_S, Row, columnsOf, keyId, runKey } from './learning-table';

const pct = percent;

/** "a → b" of one seed, or means with the min–max after RL over several: the cell an experiment's table shows too. */
const cell = (results: LearningResult[]): string => formatCell(summariseCell(results.map(outcomeOf)));

/**
 * RAGEN's figure each table is set beside: its StarPO-S (RL alone, 200 steps) beside the format
 * warm-up, whose RAGEN's-budget columns are the like-for-like ones; its SFT beside the
 * demonstrations warm-up, which is imitation then RL (StarLab's recipe), not StarPO-S alone.
 */
const RAGEN_REFERENCE = {
  format: { label: "RAGEN StarPO-S (200 steps; like for like: the RAGEN's-budget columns)", figures: RAGEN_STARPO_S },
  demonstrations: { label: 'RAGEN SFT', figures: RAGEN_SFT },
} as const;

/**
 * Prints the table as Markdown, one table per warm-up kind: eval success in % after the warm-up →
 * after RL, then the references. Missing runs show "…".
 */
export function printLearningTable(rows: readonly Row[], columns: readonly Column[], results: readonly LearningResult[], served: ReadonlyMap<string, EnvDefinition> = new Map()): void {
  const byId = new Map(results.map((r) => [r.id, r]));
  for (const warmup of ['format', 'demonstrations'] as const) {
    const cols = columns.filter((c) => c.warmup === warmup);
    if (cols.length === 0) continue;
    console.log(`\nFrom the ${warmup} warm-up: eval success (%, RAGEN's protocol) after the warm-up → after RL`);
    const reference = RAGEN_REFERENCE[warmup];
    console.log(`| environment | steps | ${cols.map((c) => c.label).join(' | ')} | random | optimal (or expert) | ${reference.label} |`);
    console.log(`|---|---|${cols.map(() => '---|').join('')}---|---|---|`);
    for (const row of rows) {
      if (warmup === 'demonstrations' && !row.hasExpert) {
        console.log(`| ${row.label} | ${row.steps} | ${cols.map(() => '–').join(' | ')} | | | |`);
        continue;
      }
      const runs = columnsOf(row);
      const found = cols.map((c) => (runs.includes(c) ? c.seeds.map((seed) => byId.get(keyId(runKey(row, c, seed), served.get(row.name)))).filter((r): r is LearningResult => r !== undefined) : null));
      const any = found.flatMap((f) => f ?? [])[0];
      const ragen = reference.figures[row.name];
      const best = any?.optimal != null ? pct(any.optimal) : any?.expert != null ? `${pct(any.expert)} (expert)` : '–';
      console.log(
        `| ${row.label} | ${row.steps} | ${found.map((f) => (f === null ? '–' : cell(f))).join(' | ')} | ${any ? pct(any.random) : '…'} | ${best} | ${ragen !== undefined ? pct(ragen) : '–'} |`,
      );
    }
  }
  const vanilla = results.filter((r) => r.key.preset !== 'starpo-s' && r.clipHigh !== undefined);
  if (vanilla.length > 0) {
    console.log('\nClip fractions of the vanilla runs (mean over steps, high / low):');
    for (const r of vanilla) console.log(`  ${r.key.env} ${JSON.stringify(r.key.envConfig)} ${r.key.warmup}/${r.key.preset}: ${r.clipHigh.toFixed(4)} / ${r.clipLow.toFixed(4)}`);
  }
}
