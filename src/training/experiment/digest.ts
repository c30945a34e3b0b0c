import { createHash } from 'node:crypto';
import type { EnvDefinition } from '../envs/types';
import { parseJobSpec } from '../spec/validate';

/** JSON with sorted keys, so equal settings give equal text. */
export function canonicalJson(value: unknown): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(sort) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)).map(([k, x]) => [k, sort(x)])) : v;
  return JSON.stringify(sort(value));
}

/**
 * Knobs added after results were stored, at the value that leaves a run as it was (the knob off):
 * left out of the digest, so that adding a knob does not make every stored run stale.
 */
export const NEUTRAL_FIELDS: Readonly<Record<string, unknown>> = {
  'model.config.gridPositions': false,
  'model.config.tiedEmbeddings': false,
  'model.config.tokenShift': false,
  'algorithm.config.worldModelCoef': 0,
  'algorithm.config.selfImitationSteps': 0,
  'algorithm.config.selfImitationBatchSize': 32,
  'algorithm.config.selfImitationBufferSize': 512,
  'algorithm.config.selfImitationLearningRate': 0.001,
  'algorithm.config.selfImitationSelect': 'all',
  'training.warmup.worldModelCoef': 0,
  'training.warmup.lrSchedule': 'constant',
  'training.warmup.curriculumShare': 0,
  'training.curriculumShare': 0,
  // AEPO's update, DAPO's dynamic sampling, GiGPO's step advantages and tree rollouts: off, or
  // read only when their mode is on.
  'algorithm.config.clipMode': 'ppo',
  'algorithm.config.entropyAdvantageAlpha': 0,
  'algorithm.config.dynamicSampling': false,
  'algorithm.config.dynamicSamplingMaxBatches': 10,
  'algorithm.config.gigpoStepWeight': 1,
  'algorithm.config.gigpoGamma': 0.95,
  'algorithm.config.gigpoNormalization': 'mean-std',
  'algorithm.config.rollout': 'independent',
  'algorithm.config.branchThreshold': 0.5,
  'algorithm.config.branchEntropyWeight': 0.2,
  'algorithm.config.branchPenalty': 0.05,
  'algorithm.config.branchInitialShare': 0.5,
  'algorithm.config.branchesPerDecision': 1,
  'algorithm.config.entropyTokens': 20,
  'algorithm.config.entropyPreMonitoring': true,
  'algorithm.config.entropyMonitorBeta': 0.5,
};

/**
 * Knobs that a switch turns off: while the switch (a dotted path) is absent, e.g. left out as
 * neutral, its knobs are read by nothing, so their values (a recipe's, for one) do not change the
 * run and are left out of the digest too.
 */
export interface Dormant {
  switch: string;
  knobs: readonly string[];
}

/** Self-imitation's knobs are read only when its steps are on, each curriculum's config only when its share is on (each switch left out as neutral when 0). */
export const DORMANT: readonly Dormant[] = [
  {
    switch: 'algorithm.config.selfImitationSteps',
    knobs: ['algorithm.config.selfImitationBatchSize', 'algorithm.config.selfImitationBufferSize', 'algorithm.config.selfImitationLearningRate', 'algorithm.config.selfImitationSelect'],
  },
  { switch: 'training.warmup.curriculumShare', knobs: ['training.warmup.curriculumConfig'] },
  { switch: 'training.curriculumShare', knobs: ['training.curriculumConfig'] },
];

/** A deep copy of `value` without the neutral fields (dotted paths) that hold their neutral value. */
function withoutNeutral(value: Record<string, unknown>, neutral: Readonly<Record<string, unknown>>, prefix = ''): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(value)
      .filter(([field, v]) => !(`${prefix}${field}` in neutral && neutral[`${prefix}${field}`] === v))
      .map(([field, v]) => [field, v && typeof v === 'object' && !Array.isArray(v) ? withoutNeutral(v as Record<string, unknown>, neutral, `${prefix}${field}.`) : v]),
  );
}

/** Deletes the dormant knobs from `copy` (withoutNeutral's fresh copy, so nothing shared is touched) and returns it. */
function withoutDormant(copy: Record<string, unknown>, dormant: readonly Dormant[]): Record<string, unknown> {
  const parentOf = (path: string) => path.split('.').slice(0, -1).reduce<Record<string, unknown> | undefined>((node, part) => node?.[part] as Record<string, unknown> | undefined, copy);
  const leaf = (path: string) => path.split('.').pop()!;
  for (const rule of dormant) {
    if (parentOf(rule.switch)?.[leaf(rule.switch)] !== undefined) continue;
    for (const knob of rule.knobs) delete parentOf(knob)?.[leaf(knob)];
  }
  return copy;
}

/**
 * What a run trains, as 16 hex digits: sha256 of the resolved spec (every default filled in;
 * neutral and dormant knobs left out, and what only files or schedules the job: its name, labels,
 * priority and device) in canonical JSON. Two specs with the same digest train the same run on the
 * same backend, so a stored result (bench/results) and a job of an experiment are the same run
 * exactly when their digests are equal. `served` is the definition of a served environment the
 * spec names (its manifest decides defaults such as the warm-up and the rollout's turns).
 */
export function specDigest(rawSpec: unknown, served?: EnvDefinition): string {
  const { name: _name, labels: _labels, priority: _priority, device: _device, ...resolved } = parseJobSpec(rawSpec, served);
  return createHash('sha256')
    .update(canonicalJson(withoutDormant(withoutNeutral(resolved as unknown as Record<string, unknown>, NEUTRAL_FIELDS), DORMANT)))
    .digest('hex')
    .slice(0, 16);
}
