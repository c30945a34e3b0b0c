/**
 * Environment seeds. Training, warm-up and evaluation draw from disjoint ranges so evaluation
 * maps are held out, and evaluation seeds do not depend on the job so every job of an
 * environment is scored on the same maps.
 */
const HALF = 0x80000000;

function mix(a: number, b: number): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x7f4a7c15, 0xc2b2ae35);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  h ^= h >>> 12;
  return h >>> 0;
}

/** i-th training initial state of a job (never reused across its steps). Lower half, odd. */
export function trainingSeed(jobSeed: number, index: number): number {
  return (mix(jobSeed, index) % (HALF / 2)) * 2 + 1;
}

/** i-th warm-up episode of a job. Lower half, even. */
export function warmupSeed(jobSeed: number, index: number): number {
  return (mix(jobSeed ^ 0x5bd1e995, index) % (HALF / 2)) * 2;
}

/** i-th evaluation seed: the upper half, the same for every job. */
export function evaluationSeed(index: number): number {
  return HALF + index;
}
