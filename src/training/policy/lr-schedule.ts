import type { LrSchedule } from '../spec/job-spec';

/**
 * Learning-rate multiplier at step `step` (from 1) of `total`: 1 for `constant`; for `cosine`, a
 * half cosine from 1 down to 0.1. In RL it damps the late, large updates that destabilised long
 * runs; in the imitation warm-up it lets the last steps settle on the expert's answers.
 */
export function learningRateScale(schedule: LrSchedule, step: number, total: number): number {
  if (schedule === 'constant') return 1;
  return 0.1 + 0.9 * 0.5 * (1 + Math.cos((Math.PI * (step - 1)) / Math.max(1, total - 1)));
}
