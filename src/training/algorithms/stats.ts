/**
 * Batch statistics on plain number arrays, with the conventions of the PyTorch reference
 * implementations (veRL, RAGEN) so that numbers compare one to one.
 */

/** Arithmetic mean; NaN for an empty array (as numpy), so a missing value is never read as 0. */
export function mean(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  let sum = 0;
  for (const x of xs) sum += x;
  return sum / xs.length;
}

/**
 * Sample standard deviation with Bessel's correction, √(Σ(x − x̄)² / (n − 1)) — what `torch.std`
 * returns by default, and therefore what veRL's GRPO and RAGEN's group filter use. 0 when n < 2
 * (a single sample carries no spread; torch would return NaN).
 */
export function unbiasedStd(xs: readonly number[]): number {
  const n = xs.length;
  if (n < 2) return 0;
  const m = mean(xs);
  let squares = 0;
  for (const x of xs) squares += (x - m) ** 2;
  return Math.sqrt(squares / (n - 1));
}

/**
 * Batch whitening, exactly veRL's `masked_whiten` (veRL `verl/utils/torch_functional.py`):
 * (x − x̄) · (s² + 1e-8)^(−1/2) with s² the unbiased variance over the batch. With
 * `shiftMean = false` the mean is added back, so only the scale changes.
 *
 * The 1e-8 sits inside the square root as in veRL (not `std + 1e-8`); the two differ only when
 * the spread is ~1e-4 or below. A constant batch whitens to all zeros.
 */
export function whiten(values: readonly number[], shiftMean = true): number[] {
  if (values.length === 0) return [];
  const m = mean(values);
  const invScale = 1 / Math.sqrt(unbiasedStd(values) ** 2 + 1e-8);
  return values.map((x) => (x - m) * invScale + (shiftMean ? 0 : m));
}
