import { CellSummary, num, pct } from './algorithms-summary';

export type Verdict = 'holds' | 'partly' | 'does not hold' | 'not measured';

export interface Claim {
  claim: string;
  verdict: Verdict;
  /** The figures the verdict rests on ('' when not measured). */
  detail: string;
}

/**
 * AEPO's three claims (Dong et al. 2025), judged from one environment's cells (`cell(preset)`,
 * undefined when the cell is missing):
 * * more diverse rollouts than ARPO: more distinct action sequences per prompt, mean over the steps;
 * * entropy high and stable where ARPO's fluctuates late: "holds" when AEPO's entropy over the
 *   last tenth is at least ARPO's and its std over the second half is lower, "partly" for one of the two;
 * * about 5 points more accuracy than GRPO: eval success after RL, "holds" at 5 points or more,
 *   "partly" when higher by less.
 */
export function aepoClaims(cell: (preset: string) => CellSummary | undefined): Claim[] {
  const aepo = cell('aepo');
  const arpo = cell('arpo');
  const grpo = cell('starpo-grpo');
  const claims: Claim[] = [];
  const judge = (claim: string, measured: boolean, verdict: () => Verdict, detail: () => string) =>
    claims.push(measured ? { claim, verdict: verdict(), detail: detail() } : { claim, verdict: 'not measured', detail: '' });

  const [d, e] = [aepo?.distinct, arpo?.distinct];
  judge(
    'more diverse rollouts than ARPO (paper: sampling clusters 54 → 62)',
    d !== undefined && e !== undefined,
    () => (d! > e! ? 'holds' : 'does not hold'),
    () => `distinct action sequences per prompt ${num(d)} (AEPO) vs ${num(e)} (ARPO)`,
  );

  const [a, b] = [aepo?.entropy, arpo?.entropy];
  judge(
    "entropy stays high and stable while ARPO's fluctuates late",
    a !== undefined && b !== undefined,
    () => {
      const steadier = a!.lateStd < b!.lateStd;
      const higher = a!.end >= b!.end;
      return steadier && higher ? 'holds' : steadier || higher ? 'partly' : 'does not hold';
    },
    () => `end entropy ${num(a!.end)} vs ${num(b!.end)}, std over the second half ${num(a!.lateStd, 3)} vs ${num(b!.lateStd, 3)} (AEPO vs ARPO)`,
  );

  judge(
    'about 5 points more accuracy than GRPO',
    aepo !== undefined && grpo !== undefined,
    () => {
      const gap = 100 * (aepo!.success.mean - grpo!.success.mean);
      return gap >= 5 ? 'holds' : gap > 0 ? 'partly' : 'does not hold';
    },
    () => {
      const [x, y] = [aepo!.success, grpo!.success];
      const gap = 100 * (x.mean - y.mean);
      const overlap = x.min <= y.max && y.min <= x.max ? ', within the seeds’ spread' : '';
      return `eval success ${pct(x.mean)} (${pct(x.min)}–${pct(x.max)}) vs ${pct(y.mean)} (${pct(y.min)}–${pct(y.max)}): ${gap >= 0 ? '+' : ''}${gap.toFixed(1)} points${overlap}`;
    },
  );
  return claims;
}
