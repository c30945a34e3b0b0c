/**
 * A curriculum: the first share of a phase's steps (rounded) draws its episodes from an easier
 * version of the task, `config` laid over the job's environment config; the rest from the job's.
 * The warm-up (training.warmup.curriculum*) and the RL steps (training.curriculum*) each have one.
 */
export interface Curriculum {
  curriculumShare: number;
  curriculumConfig?: Record<string, unknown>;
}

/** How many of a phase's `steps` steps, from its first, draw from the curriculum. */
export function curriculumSteps(curriculum: Curriculum, steps: number): number {
  return Math.round(curriculum.curriculumShare * steps);
}

/** The environment config of step `i` (from 0) of a phase of `steps` steps. */
export function curriculumEnvConfig(envConfig: Record<string, unknown>, curriculum: Curriculum, i: number, steps: number): Record<string, unknown> {
  return i < curriculumSteps(curriculum, steps) ? { ...envConfig, ...curriculum.curriculumConfig } : envConfig;
}

/**
 * The RL steps (numbered from 1, as reported) at which the training episodes change task: the
 * first step after the curriculum, if it ends within the job. The collapse monitor starts afresh
 * there (CollapseMonitor.newTask).
 */
export function taskChangeSteps(curriculum: Curriculum, steps: number): number[] {
  const n = curriculumSteps(curriculum, steps);
  return n > 0 && n < steps ? [n + 1] : [];
}
