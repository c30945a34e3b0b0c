import type { AlgorithmConfig } from '../algorithms/presets';
import type { Env } from '../envs/types';
import type { Tokenizer } from '../policy/tokenizer';
import type { Rng } from '../random';
import { BranchRule, globalSampleCount, segmentEntropy, shouldBranch } from './branching';
import type { ContextBuilder } from './context';
import { LiveEpisode, ResponsePolicy, RolloutSettings, Trajectory, closeEpisodes, playToEnd, playTurns, startEpisode, startEpisodes } from './engine';

/** How a tree rollout spends a group's budget of k trajectories (docs/training.md, "Tree rollouts"). */
export interface TreeSettings {
  rule: BranchRule;
  /** k: trajectories per prompt, exactly. */
  groupSize: number;
  /** The share of k started from the prompt without pre-monitoring (ARPO's scripts: 8 of 16). */
  initialShare: number;
  /** τ, w and AEPO's penalty per consecutive branching round. */
  threshold: number;
  entropyWeight: number;
  penalty: number;
  /** Positions of a segment its entropy is taken over (20 in both codes). */
  entropyTokens: number;
  /** Copies one path may spawn at one decision point (the codes' beam_size − 1). */
  branchesPerDecision: number;
  /** AEPO: m from the two probes; otherwise (and for ARPO) m = round(initialShare·k). */
  preMonitoring: boolean;
  /** β of AEPO's pre-monitoring sigmoid. */
  monitorBeta: number;
}

/** The tree settings of an algorithm config that asks for a tree rollout. */
export function treeSettings(config: AlgorithmConfig, groupSize: number): TreeSettings {
  if (config.rollout === 'independent') throw new Error('treeSettings: the config asks for independent rollouts');
  return {
    rule: config.rollout,
    groupSize,
    initialShare: config.branchInitialShare,
    threshold: config.branchThreshold,
    entropyWeight: config.branchEntropyWeight,
    penalty: config.branchPenalty,
    entropyTokens: config.entropyTokens,
    branchesPerDecision: config.branchesPerDecision,
    preMonitoring: config.entropyPreMonitoring,
    monitorBeta: config.entropyMonitorBeta,
  };
}

/** What a group's tree looked like, for the step's metrics. */
export interface TreeGroupStats {
  /** m: trajectories started from the prompt at the outset. */
  globalSamples: number;
  /** Trajectories created by branching (the rest of k are global samples, some added late). */
  branches: number;
  /** Lengths of the maximal runs of consecutive rounds in which the group branched. */
  branchRuns: number[];
  /** Segment entropies (normalised) of responses that followed environment or tool feedback. */
  afterFeedbackEntropies: number[];
  /** AEPO's probe entropies; absent for ARPO. */
  rootEntropy?: number;
  toolEntropy?: number;
}

/** The draws a tree rollout makes: u for each decision, a seed for each branch's environment. */
export type BranchRng = Pick<Rng, 'next' | 'nextUint32'>;

export interface TreeRollout {
  /** k per group, ordered by group then sample. */
  trajectories: Trajectory[];
  groups: TreeGroupStats[];
}

/** One prompt's tree while it grows. */
interface GroupTree {
  seed: number;
  group: number;
  paths: LiveEpisode[];
  globalSamples: number;
  stats: TreeGroupStats;
  /** Branching rounds in a row so far (AEPO's l, counted per prompt as its code does). */
  consecutive: number;
}

/**
 * ARPO's and AEPO's branching rollout over `seeds` (one group each), on the turn engine of
 * `rollout`: each round plays one turn of every running path in one policy call; then, for
 * each group with fewer than k trajectories, every path that goes on after the feedback it just
 * got faces `branchesPerDecision` decisions (a fresh u each, ΔH its latest segment's entropy
 * minus its first's); a branch copies the path, its prefix and its environment (cloned with a
 * branch seed of its own, so its future randomness is its own). A group with no running path
 * gets one fresh global sample per round, so every group ends with exactly k trajectories.
 * Each branch carries the whole prefix ("soft" shared prefixes: the prefix trains once per
 * descendant, as in ARPO's code).
 *
 * AEPO with pre-monitoring first probes each prompt twice, and discards both: one response to the
 * first observation (H_root) and one whole episode (H̄_tool, the mean of its segment entropies),
 * which set m.
 */
export async function treeRollout(
  policy: ResponsePolicy,
  makeEnv: () => Env,
  seeds: readonly number[],
  tokenizer: Tokenizer,
  contexts: ContextBuilder,
  settings: RolloutSettings,
  tree: TreeSettings,
  rng: BranchRng,
): Promise<TreeRollout> {
  const k = tree.groupSize;
  const entropyOf = (episode: LiveEpisode) => {
    const turns = episode.trajectory.turns;
    return segmentEntropy(turns[turns.length - 1].response.entropies, tokenizer.size, tree.entropyTokens);
  };
  const probes = tree.rule === 'aepo' && tree.preMonitoring ? await probeEntropies(policy, makeEnv, seeds, tokenizer, contexts, settings, tree, entropyOf) : null;
  const groups: GroupTree[] = seeds.map((seed, group) => {
    const globalSamples = probes
      ? globalSampleCount(k, probes[group].root, probes[group].tool, tree.monitorBeta)
      : Math.max(1, Math.min(k, Math.round(tree.initialShare * k)));
    const stats: TreeGroupStats = { globalSamples, branches: 0, branchRuns: [], afterFeedbackEntropies: [] };
    if (probes) Object.assign(stats, { rootEntropy: probes[group].root, toolEntropy: probes[group].tool });
    return { seed, group, paths: [], globalSamples, stats, consecutive: 0 };
  });
  const firstPaths = await startEpisodes(makeEnv, groups.flatMap((g) => Array.from({ length: g.globalSamples }, (_, sample) => ({ seed: g.seed, group: g.group, sample }))));
  for (const path of firstPaths) groups[path.trajectory.group].paths.push(path);
  try {
    await playTree();
  } finally {
    await closeEpisodes(groups.flatMap((g) => g.paths));
  }
  for (const group of groups) if (group.consecutive > 0) group.stats.branchRuns.push(group.consecutive);
  return {
    trajectories: groups.flatMap((g) => g.paths.map((p) => p.trajectory).sort((a, b) => a.sample - b.sample)),
    groups: groups.map((g) => g.stats),
  };

  async function playTree(): Promise<void> {
    const firstEntropy = new Map<LiveEpisode, number>();
    const latestEntropy = new Map<LiveEpisode, number>();
    try {
      for (;;) {
        const live = groups.flatMap((g) => g.paths.filter((p) => !p.ended));
        if (live.length === 0) break;
        await playTurns(policy, live, tokenizer, contexts, settings);
        for (const path of live) {
          const entropy = entropyOf(path);
          if (!firstEntropy.has(path)) firstEntropy.set(path, entropy);
          latestEntropy.set(path, entropy);
          if (path.trajectory.turns.length > 1) groups[path.trajectory.group].stats.afterFeedbackEntropies.push(entropy);
          if (path.trajectory.turns.length >= settings.maxTurns) path.ended = true;
        }
        // Decisions draw from the shared generator in group order; the copies they ask for are made afterwards, together.
        const pending = groups.map((group) => grow(group, firstEntropy, latestEntropy));
        await Promise.all(pending.flat().map(async (make) => make()));
      }
    } finally {
      policy.release?.();
    }
  }

  /**
   * One round's branching decisions for a group, or a fresh global sample when none of its paths
   * runs; returns the paths to make (a remote environment copies or resets over the network), each
   * of which takes its slot in `group.paths` so sample numbers follow the order of the decisions.
   */
  function grow(group: GroupTree, firstEntropy: Map<LiveEpisode, number>, latestEntropy: Map<LiveEpisode, number>): (() => Promise<void>)[] {
    const running = group.paths.filter((p) => !p.ended);
    if (group.paths.length >= k) {
      endRun(group);
      return [];
    }
    const slot = (make: () => Promise<LiveEpisode>) => {
      const index = group.paths.length;
      group.paths.push(null as unknown as LiveEpisode);
      return async () => {
        group.paths[index] = await make();
      };
    };
    if (running.length === 0) {
      const sample = group.paths.length;
      const made = slot(() => startEpisode(makeEnv(), { seed: group.seed, group: group.group, sample }));
      endRun(group);
      return [made];
    }
    const made: (() => Promise<void>)[] = [];
    for (const source of running) {
      const entropyChange = latestEntropy.get(source)! - firstEntropy.get(source)!;
      for (let d = 0; d < tree.branchesPerDecision && group.paths.length < k; d++) {
        const decision = { u: rng.next(), entropyChange, consecutiveBranches: group.consecutive };
        if (!shouldBranch(decision, tree)) continue;
        const sample = group.paths.length;
        const branchSeed = rng.nextUint32();
        made.push(slot(() => branchOf(source, sample, branchSeed)));
      }
    }
    group.stats.branches += made.length;
    if (made.length > 0) group.consecutive++;
    else endRun(group);
    return made;
  }
}

function endRun(group: GroupTree): void {
  if (group.consecutive > 0) group.stats.branchRuns.push(group.consecutive);
  group.consecutive = 0;
}

/** A copy of `source` at its current state, continuing as trajectory `sample` of the group. */
async function branchOf(source: LiveEpisode, sample: number, branchSeed: number): Promise<LiveEpisode> {
  const from = source.trajectory;
  return {
    env: await source.env.clone(branchSeed),
    observation: source.observation,
    history: [...source.history],
    ended: false,
    trajectory: { ...from, sample, turns: [...from.turns], branchedFrom: { sample: from.sample, turn: from.turns.length } },
  };
}

/**
 * AEPO's two probes per prompt, discarded afterwards: H_root, the entropy of a response to the
 * first observation, and H̄_tool, the mean segment entropy of a whole probe episode (its first
 * segment included, as in AEPO's code; H_root when the episode has no segment).
 */
async function probeEntropies(
  policy: ResponsePolicy,
  makeEnv: () => Env,
  seeds: readonly number[],
  tokenizer: Tokenizer,
  contexts: ContextBuilder,
  settings: RolloutSettings,
  tree: TreeSettings,
  entropyOf: (episode: LiveEpisode) => number,
): Promise<{ root: number; tool: number }[]> {
  const start = () => startEpisodes(makeEnv, seeds.map((seed, group) => ({ seed, group, sample: -1 })));
  // Only the first `entropyTokens` positions count, so the root probe stops there.
  const rootProbe = await start();
  try {
    await playTurns(policy, rootProbe, tokenizer, contexts, { ...settings, maxTokensPerTurn: Math.min(settings.maxTokensPerTurn, tree.entropyTokens) });
  } finally {
    policy.release?.();
    await closeEpisodes(rootProbe);
  }
  const roots = rootProbe.map(entropyOf);
  const segments: number[][] = seeds.map(() => []);
  const probe = await start();
  try {
    await playToEnd(policy, probe, tokenizer, contexts, settings, (played) => {
      for (const episode of played) segments[episode.trajectory.group].push(entropyOf(episode));
    });
  } finally {
    await closeEpisodes(probe);
  }
  return seeds.map((_, g) => ({ root: roots[g], tool: segments[g].length > 0 ? segments[g].reduce((a, b) => a + b, 0) / segments[g].length : roots[g] }));
}
