/**
 * A curriculum: the first share of a phase's steps (rounded) draws its episodes from an easier
 * version of the task, `config` laid over the job's environment config; the rest from the job's.
 * The warm-up (training.warmup.curriculum*) and the RL steps (training.curriculum*) each have one.
 */
export interface Curriculum {
  curriculumShare: number;
  curriculumConfig?: Record<string, unknown>;
}

/** The environment config of step `i` (from 0) of a phase of `steps` steps. */
export function curriculumEnvConfig(envConfig: Record<string, unknown>, curriculum: Curriculum, i: number, steps: number): Record<string, unknown> {
  return i < Math.round(curriculum.curriculumShare * steps) ? { ...envConfig, ...curriculum.curriculumConfig } : envConfig;
}
