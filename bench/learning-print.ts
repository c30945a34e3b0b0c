import type { LearningResult } from './learning';
import { Column, RAGEN_STARPO_S, Row, keyId, runKey } from './learning-table';

const pct = (x: number) => `${(100 * x).toFixed(1)}`;

/** "a → b" of one seed, or means with the min–max after RL over several. */
function cell(results: LearningResult[]): string {
  if (results.length === 0) return '…';
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const after = results.map((r) => r.afterRl);
  const head = `${pct(mean(results.map((r) => r.afterWarmup)))} → ${pct(mean(after))}`;
  return results.length === 1 ? head : `${head} (${pct(Math.min(...after))}–${pct(Math.max(...after))}, ${results.length} seeds)`;
}

/**
 * Prints the table as Markdown, one table per warm-up kind: eval success in % after the warm-up →
 * after RL, then the references. Missing runs show "…".
 */
export function printLearningTable(rows: readonly Row[], columns: readonly Column[], results: readonly LearningResult[]): void {
  const byId = new Map(results.map((r) => [r.id, r]));
  for (const warmup of ['format', 'demonstrations'] as const) {
    const cols = columns.filter((c) => c.warmup === warmup);
    if (cols.length === 0) continue;
    console.log(`\nFrom the ${warmup} warm-up: eval success (%, RAGEN's protocol) after the warm-up → after RL`);
    console.log(`| environment | steps | ${cols.map((c) => c.label).join(' | ')} | random | optimal | RAGEN StarPO-S |`);
    console.log(`|---|---|${cols.map(() => '---|').join('')}---|---|---|`);
    for (const row of rows) {
      if (warmup === 'demonstrations' && !row.hasExpert) {
        console.log(`| ${row.label} | ${row.steps} | ${cols.map(() => '–').join(' | ')} | | | |`);
        continue;
      }
      const found = cols.map((c) => c.seeds.map((seed) => byId.get(keyId(runKey(row, c, seed)))).filter((r): r is LearningResult => r !== undefined));
      const any = found.flat()[0];
      const ragen = RAGEN_STARPO_S[row.name];
      console.log(
        `| ${row.label} | ${row.steps} | ${found.map(cell).join(' | ')} | ${any ? pct(any.random) : '…'} | ${any?.optimal != null ? pct(any.optimal) : '–'} | ${ragen !== undefined ? pct(ragen) : '–'} |`,
      );
    }
  }
  const vanilla = results.filter((r) => r.key.preset !== 'starpo-s' && r.clipHigh !== undefined);
  if (vanilla.length > 0) {
    console.log('\nClip fractions of the vanilla runs (mean over steps, high / low):');
    for (const r of vanilla) console.log(`  ${r.key.env} ${JSON.stringify(r.key.envConfig)} ${r.key.warmup}/${r.key.preset}: ${r.clipHigh.toFixed(4)} / ${r.clipLow.toFixed(4)}`);
  }
}
