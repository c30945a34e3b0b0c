import { sampleWithDynamicSampling, selectGroupsByRewardStd } from './algorithms/groupFilters';
import { mean } from './algorithms/stats';
import { usesCritic } from './algorithms/presets';
import { BackendChoice, BackendName, initBackend } from './backend';
import { ManifestChangedError, TrainerState, peekCheckpointState, restoreCheckpoint, saveCheckpoint } from './checkpoint';
import { curriculumEnvConfig, taskChangeSteps } from './curriculum';
import { getEnvDefinition } from './envs/registry';
import type { EnvDefinition } from './envs/types';
import { evaluate } from './evaluate';
import { Adam } from './policy/adam';
import { learningRateScale } from './policy/lr-schedule';
import { gridLayoutFor } from './policy/grid-positions';
import { TransformerPolicy } from './policy/policy';
import type { Tokenizer } from './policy/tokenizer';
import { TransformerLM } from './policy/transformer';
import { Rng } from './random';
import { TrajectoryRecord, trajectoryRecords } from './records';
import type { ContextBuilder } from './rollout/context';
import { contextsFor, tokenizerFor } from './episode-io';
import { RolloutSettings, Trajectory, rollout } from './rollout/engine';
import { TreeGroupStats, treeRollout, treeSettings } from './rollout/tree';
import { trainingSeed } from './seeds';
import { SelfImitationBuffer } from './self-imitation';
import { CheckpointHealth, CollapseMonitor, CollapseWarning } from './signals/collapse';
import { EVAL_METRICS, EvalProtocol, METRIC, Metrics, byGroup, rolloutMetrics, treeMetrics } from './signals/step-metrics';
import { toolMetrics } from './signals/tool-metrics';
import type { JobSpec } from './spec/validate';
import { Learner, updatePolicy } from './update';
import { supervisedStep } from './warmup';
import { warmUp } from './warmup-phase';
import type { WarmupStore } from './warmup-store';

/** How the trainer reports: the worker turns these into rows, events and progress. */
export interface TrainerCallbacks {
  onStep?(step: number, metrics: Metrics): void | Promise<void>;
  onTrajectories?(step: number, records: TrajectoryRecord[]): void | Promise<void>;
  /** Collapse warnings that fired at this step (after onStep of the same step). */
  onWarnings?(step: number, warnings: CollapseWarning[]): void | Promise<void>;
  /** `health`: tag from the collapse signals at this step (healthy | suspect | unhealthy). */
  onCheckpoint?(step: number, bytes: Uint8Array, health: CheckpointHealth): void | Promise<void>;
  /** Polled between steps (warm-up steps too); true makes the trainer checkpoint and return, or abandon an unfinished warm-up. */
  shouldStop?(): boolean | Promise<boolean>;
  onLog?(message: string): void;
  /** The step's rollout ended and its update begins: a step that takes hours on a CPU worker shows where it is. */
  onRolloutEnd?(step: number, trajectories: number, rolloutMs: number): void;
}

export interface TrainerOptions {
  backend?: BackendChoice;
  /** Checkpoint bytes to resume from (same spec). */
  resumeFrom?: Uint8Array;
  /** Where finished warm-ups are kept and looked up, so jobs that share one train it once (warmup-store.ts). */
  warmupStore?: WarmupStore;
  /** The environment, when it is not a built-in: a served one (envs/remote/), connected by the caller. */
  environment?: EnvDefinition;
}

export interface TrainerResult {
  status: 'completed' | 'stopped';
  step: number;
}

/**
 * What dynamic sampling cost a step: the batches beyond the first, the groups and trajectories
 * they added, and how many of the `wanted` groups were still missing when its bound was spent.
 */
export function dynamicSamplingMetrics(groupsDrawn: number, informative: number, batches: number, wanted: number, groupSize: number): Metrics {
  return {
    [METRIC.dynamicSamplingRounds]: batches - 1,
    [METRIC.extraGroups]: groupsDrawn - wanted,
    [METRIC.extraTrajectories]: (groupsDrawn - wanted) * groupSize,
    [METRIC.dynamicSamplingShortfall]: Math.max(0, wanted - informative),
  };
}

const RNG_STREAM = { sampling: 1, update: 2, warmup: 3, evaluation: 4 } as const;

/**
 * The StarPO loop (docs/training.md, "The loop"): warm-up and evaluation as step 0, then per step rollout →
 * filter → advantages → critic/actor update → metrics → callbacks, with evaluation and
 * checkpoints on schedule. Pure library: no service imports; everything leaves via callbacks.
 */
export class Trainer {
  readonly backend: BackendName;
  readonly tokenizer: Tokenizer;
  private readonly definition: EnvDefinition;
  private readonly contexts: ContextBuilder;
  private readonly settings: RolloutSettings;
  private readonly learner: Learner;
  private state: TrainerState;
  private samplingRng: Rng;
  private updateRng: Rng;
  private lastCheckpointStep = -1;
  private readonly monitor: CollapseMonitor;
  private readonly imitation: SelfImitationBuffer | null;

  private constructor(readonly spec: JobSpec, backend: BackendName, resumeFrom?: Uint8Array, private readonly warmupStore?: WarmupStore, served?: EnvDefinition) {
    this.backend = backend;
    const { environment, rollout: r, model, training, algorithm } = spec;
    this.definition = served?.id === environment.id ? served : getEnvDefinition(environment.id);
    const digest = this.definition.served?.digest;
    this.tokenizer = tokenizerFor(this.definition, spec);
    this.settings = { ...r };
    this.contexts = contextsFor(this.tokenizer, spec);
    const modelConfig = { vocabSize: this.tokenizer.size, ...model.config };
    const layout = gridLayoutFor(modelConfig, this.tokenizer.tokens);
    const actor = new TransformerLM(modelConfig, training.seed, this.tokenizer.forbiddenIds, layout);
    const critic = usesCritic(algorithm.config) ? new TransformerLM(modelConfig, training.seed + 1, this.tokenizer.forbiddenIds, layout) : null;
    const reference = algorithm.config.klCoef > 0 ? new TransformerLM(modelConfig, training.seed + 2, this.tokenizer.forbiddenIds, layout) : null;
    const { criticLearningRateScale, weightDecay } = algorithm.config;
    this.learner = {
      actor,
      actorOptimizer: new Adam(actor.namedVariables(), training.learningRate, weightDecay),
      critic,
      criticOptimizer: critic ? new Adam(critic.namedVariables(), training.learningRate * criticLearningRateScale, weightDecay) : null,
      reference,
      imitationOptimizer: algorithm.config.selfImitationSteps > 0 ? new Adam(actor.namedVariables(), algorithm.config.selfImitationLearningRate) : null,
    };
    this.imitation = algorithm.config.selfImitationSteps > 0 ? new SelfImitationBuffer(algorithm.config.selfImitationBufferSize) : null;
    this.monitor = new CollapseMonitor(spec.collapse.rules);
    this.samplingRng = new Rng(training.seed, RNG_STREAM.sampling);
    this.updateRng = new Rng(training.seed, RNG_STREAM.update);
    this.state = { step: -1, nextSeedIndex: 0, samplingRng: this.samplingRng.getState(), updateRng: this.updateRng.getState(), monitor: this.monitor.getState(), ...(digest ? { environmentDigest: digest } : {}) };
    if (resumeFrom) {
      const stored = peekCheckpointState(resumeFrom).environmentDigest;
      if (digest && stored && stored !== digest) throw new ManifestChangedError(environment.id, stored, digest);
      this.state = restoreCheckpoint(resumeFrom, this.learner, this.tokenizer);
      this.monitor.setState(this.state.monitor);
      if (this.imitation && this.state.selfImitation) this.imitation.setState(this.state.selfImitation);
      this.samplingRng = Rng.fromState(this.state.samplingRng);
      this.updateRng = Rng.fromState(this.state.updateRng);
      this.lastCheckpointStep = this.state.step;
    }
    this.monitor.useLearningRate(training.learningRate);
  }

  static async create(spec: JobSpec, options: TrainerOptions = {}, log: (m: string) => void = () => undefined): Promise<Trainer> {
    const backend = await initBackend(options.backend ?? 'auto', log);
    return new Trainer(spec, backend, options.resumeFrom, options.warmupStore, options.environment);
  }

  /** Last completed step (−1 before the warm-up, 0 after it). */
  get step(): number {
    return this.state.step;
  }

  get parameterCount(): number {
    return this.learner.actor.parameterCount();
  }

  async run(callbacks: TrainerCallbacks = {}): Promise<TrainerResult> {
    const { training } = this.spec;
    if (this.state.step < 0) {
      const warmupMetrics = await this.warmup(callbacks);
      // Stopped during the warm-up: nothing to checkpoint (step −1); the next run starts it over.
      if (warmupMetrics === null) return { status: 'stopped', step: this.state.step };
      this.state.step = 0;
      await callbacks.onStep?.(0, { ...warmupMetrics, ...(await this.evaluationMetrics(0)) });
      await this.checkpoint(callbacks);
    }
    while (this.state.step < training.steps) {
      if (await callbacks.shouldStop?.()) {
        await this.checkpoint(callbacks);
        return { status: 'stopped', step: this.state.step };
      }
      const step = this.state.step + 1;
      if (taskChangeSteps(training, training.steps).includes(step)) {
        this.monitor.newTask();
        callbacks.onLog?.(`curriculum: done after step ${step - 1}; training episodes from environment.config from step ${step}`);
      }
      const { metrics, trajectories } = await this.trainStep(callbacks);
      this.state.step = step;
      if (this.isDue(step, training.evalEvery)) Object.assign(metrics, await this.evaluationMetrics(step));
      await callbacks.onTrajectories?.(step, trajectoryRecords(trajectories, training.trajectoryTextSample));
      await callbacks.onStep?.(step, metrics);
      const warnings = this.monitor.observe(step, metrics);
      if (warnings.length > 0) await callbacks.onWarnings?.(step, warnings);
      if (this.isDue(step, training.checkpointEvery)) await this.checkpoint(callbacks);
    }
    return { status: 'completed', step: this.state.step };
  }

  /** Checkpoint bytes of the current state. */
  checkpointBytes(): Uint8Array {
    this.state.samplingRng = this.samplingRng.getState();
    this.state.updateRng = this.updateRng.getState();
    this.state.monitor = this.monitor.getState();
    if (this.imitation) this.state.selfImitation = this.imitation.getState();
    return saveCheckpoint(this.learner, this.tokenizer, { ...this.state });
  }

  dispose(): void {
    const { actor, critic, reference, actorOptimizer, criticOptimizer, imitationOptimizer } = this.learner;
    for (const disposable of [actor, critic, reference, actorOptimizer, criticOptimizer, imitationOptimizer]) disposable?.dispose();
  }

  private isDue(step: number, every: number): boolean {
    return step === this.spec.training.steps || (every > 0 && step % every === 0);
  }

  private async checkpoint(callbacks: TrainerCallbacks): Promise<void> {
    if (this.lastCheckpointStep === this.state.step || !callbacks.onCheckpoint) return;
    await callbacks.onCheckpoint(this.state.step, this.checkpointBytes(), this.monitor.health(this.state.step));
    this.lastCheckpointStep = this.state.step;
  }

  private warmup(callbacks: TrainerCallbacks): Promise<Metrics | null> {
    const { spec, definition, settings, tokenizer, contexts, learner, backend, warmupStore } = this;
    const shouldStop = callbacks.shouldStop ? () => callbacks.shouldStop!() : undefined;
    return warmUp({ spec, definition, settings, tokenizer, contexts, learner, backend }, new Rng(spec.training.seed, RNG_STREAM.warmup), warmupStore, callbacks.onLog, shouldStop);
  }

  private async trainStep(callbacks: TrainerCallbacks): Promise<{ metrics: Metrics; trajectories: Trajectory[] }> {
    const { rollout: r, training, algorithm } = this.spec;
    const started = Date.now();
    const scale = learningRateScale(training.lrSchedule, this.state.step + 1, training.steps);
    this.learner.actorOptimizer.learningRate = training.learningRate * scale;
    if (this.learner.criticOptimizer) this.learner.criticOptimizer.learningRate = training.learningRate * algorithm.config.criticLearningRateScale * scale;
    if (this.learner.imitationOptimizer) this.learner.imitationOptimizer.learningRate = algorithm.config.selfImitationLearningRate * scale;
    const policy = new TransformerPolicy(this.learner.actor, this.tokenizer, this.samplingRng, this.spec.specVersion === 2);
    const { groups, candidates, batches, trees } = await this.drawGroups(policy);
    const trajectories = groups.flat();
    const rolloutMs = Date.now() - started;
    callbacks.onRolloutEnd?.(this.state.step + 1, trajectories.length, rolloutMs);
    const kept = this.filterGroups(groups, candidates);
    const metrics: Metrics = rolloutMetrics(groups, kept, { open: this.tokenizer.id('<think>'), close: this.tokenizer.id('</think>') });
    if (algorithm.config.dynamicSampling) Object.assign(metrics, dynamicSamplingMetrics(groups.length, candidates.length, batches, r.groups, r.groupSize));
    if (trees.length > 0) Object.assign(metrics, treeMetrics(trees, Math.min(r.maxTurns, r.groupSize - 1)));
    const updateStarted = Date.now();
    Object.assign(metrics, updatePolicy(this.learner, kept.map((g) => groups[g]), algorithm.config, r.temperature, this.updateRng));
    if (this.imitation) Object.assign(metrics, this.selfImitate(trajectories));
    // A branch's shared prefix was generated once, by the trajectory it was copied from.
    const generated = trajectories.reduce((n, t) => n + t.turns.slice(t.branchedFrom?.turn ?? 0).reduce((m, turn) => m + turn.response.tokens.length, 0), 0);
    metrics[METRIC.rolloutMs] = rolloutMs;
    metrics[METRIC.updateMs] = Date.now() - updateStarted;
    metrics[METRIC.stepMs] = Date.now() - started;
    metrics[METRIC.tokensPerSecond] = generated / Math.max(rolloutMs / 1000, 1e-3);
    const { toolCalls } = this.definition;
    if (toolCalls) Object.assign(metrics, toolMetrics(trajectories, (actions) => toolCalls(this.spec.environment.config, actions)));
    return { metrics, trajectories };
  }

  /**
   * Self-imitation after the RL update: every successful episode of the step (all groups drawn,
   * not only those the filter kept) joins the buffer, then `selfImitationSteps` supervised steps
   * replay episodes drawn from it (docs/training.md, "Algorithms").
   */
  private selfImitate(trajectories: readonly Trajectory[]): Metrics {
    const config = this.spec.algorithm.config;
    const buffer = this.imitation!;
    const added = buffer.add(trajectories, config.selfImitationSelect);
    const losses: number[] = [];
    for (let i = 0; i < config.selfImitationSteps && buffer.size > 0; i++) {
      const rows = buffer.sample(this.updateRng, config.selfImitationBatchSize);
      losses.push(supervisedStep(this.learner.actor, this.learner.imitationOptimizer!, rows, config.maxGradNorm));
    }
    return {
      [METRIC.selfImitationLoss]: losses.length > 0 ? mean(losses) : 0,
      [METRIC.selfImitationBuffer]: buffer.size,
      [METRIC.selfImitationAdded]: added,
    };
  }

  /**
   * One batch of `groups` × `groupSize` rollouts from fresh seeds; with dynamic sampling (DAPO),
   * more batches until `groups` informative groups are in hand, within its bound. Returns every
   * group drawn (group ids continue across batches) and the candidates to train on.
   */
  private async drawGroups(policy: TransformerPolicy): Promise<{ groups: Trajectory[][]; candidates: number[]; batches: number; trees: TreeGroupStats[] }> {
    const { rollout: r, training, algorithm, environment } = this.spec;
    // The step's environment: the curriculum's easier task for the first share of the RL steps.
    const envConfig = curriculumEnvConfig(environment.config, training, this.state.step, training.steps);
    const makeEnv = () => this.definition.create(envConfig);
    const trees: TreeGroupStats[] = [];
    let drawn = 0;
    const drawBatch = async () => {
      const requests = [];
      for (let g = 0; g < r.groups; g++) {
        const seed = trainingSeed(training.seed, this.state.nextSeedIndex++);
        for (let sample = 0; sample < r.groupSize; sample++) requests.push({ seed, group: drawn + g, sample });
      }
      const offset = drawn;
      drawn += r.groups;
      if (algorithm.config.rollout === 'independent') return byGroup(await rollout(policy, makeEnv, requests, this.tokenizer, this.contexts, this.settings));
      // Tree rollouts (ARPO, AEPO): k trajectories per seed, branched where the policy is uncertain.
      const seeds = requests.filter((q) => q.sample === 0).map((q) => q.seed);
      const tree = await treeRollout(policy, makeEnv, seeds, this.tokenizer, this.contexts, this.settings, treeSettings(algorithm.config, r.groupSize), this.samplingRng);
      trees.push(...tree.groups);
      return byGroup(tree.trajectories.map((t) => ({ ...t, group: t.group + offset })));
    };
    if (!algorithm.config.dynamicSampling) {
      const groups = await drawBatch();
      return { groups, candidates: groups.map((_, i) => i), batches: 1, trees };
    }
    const sample = await sampleWithDynamicSampling(drawBatch, (g) => g.map((t) => t.return), r.groups, algorithm.config.dynamicSamplingMaxBatches);
    return { groups: sample.groups, candidates: sample.kept, batches: sample.batches, trees };
  }

  /**
   * StarPO-S keeps the candidate groups with the highest in-group reward std (at least one group;
   * for jobs that count minibatches, at least one trajectory per minibatch).
   */
  private filterGroups(groups: Trajectory[][], candidates: number[]): number[] {
    const config = this.spec.algorithm.config;
    if (config.filter === 'none' || candidates.length === 0) return candidates;
    const minGroups = Math.max(1, Math.ceil((config.miniBatches ?? 1) / this.spec.rollout.groupSize));
    return selectGroupsByRewardStd(candidates.map((g) => groups[g].map((t) => t.return)), config.filterKeepFraction, minGroups).map((i) => candidates[i]);
  }

  /**
   * Evaluation on the fixed held-out seeds: at evalTemperature (RAGEN's protocol by default), and
   * greedily as a second series when asked. Jobs stored before version 2 keep their one series.
   */
  private async evaluationMetrics(step: number): Promise<Metrics> {
    const { training } = this.spec;
    const runs: [EvalProtocol, number][] =
      this.spec.specVersion === 1
        ? [['legacy', training.evalTemperature]]
        : [[training.evalTemperature > 0 ? 'sampled' : 'greedy', training.evalTemperature]];
    if (this.spec.specVersion === 2 && training.evalGreedy && training.evalTemperature > 0) runs.push(['greedy', 0]);
    const metrics: Metrics = {};
    for (const [protocol, temperature] of runs) {
      const policy = new TransformerPolicy(this.learner.actor, this.tokenizer, new Rng(training.seed + step, RNG_STREAM.evaluation), this.spec.specVersion === 2);
      const result = await evaluate(policy, this.definition, this.spec.environment.config, { ...this.settings, temperature }, this.tokenizer, this.contexts, training.evalEpisodes);
      const names = EVAL_METRICS[protocol];
      Object.assign(metrics, { [names.success]: result.success, [names.return]: result.meanReturn, [names.formatValid]: result.formatValid });
    }
    return metrics;
  }
}
