import type { AlgorithmConfig } from './algorithms/presets';
import { PackedTurns, TurnSequence, packTurns } from './policy/batch';
import { Rng } from './random';
import type { Trajectory } from './rollout/engine';

/** One successful episode as the supervised rows replay it: each turn's context and response tokens. */
export type StoredEpisode = TurnSequence[];

/** What a checkpoint keeps of the buffer. */
export interface SelfImitationState {
  episodes: StoredEpisode[];
  added: number;
  /** Each episode's replay weight ('advantage'); absent in checkpoints from before it: all 1. */
  weights?: number[];
}

/**
 * Self-imitation (Oh et al. 2018; the filtered-behaviour-cloning step of expert iteration): the
 * agent's own successful training episodes, kept first-in first-out, replayed as supervised
 * examples between RL updates. A sparse success on a map is a few trajectories in one group; one
 * PPO step moves their log-probabilities by a clipped ratio and then they are gone. Replaying them
 * lets the policy fit the map → actions mapping it found, which is what reading the grid needs.
 * Only the job's own training seeds and its environment's success flag are used: no expert,
 * solver or evaluation seed.
 */
export class SelfImitationBuffer {
  private episodes: StoredEpisode[] = [];
  private weights: number[] = [];
  private added = 0;

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.episodes.length;
  }

  /** Episodes stored since the job began (evicted ones included). */
  get total(): number {
    return this.added;
  }

  /**
   * Stores the successful trajectories, evicting the oldest past capacity. Returns how many were
   * added. `shortest` keeps, of each group's successes (one initial state), only those with the
   * group's fewest actions: a success that wandered teaches its detours as well as its way.
   * `advantage` weights each success by SIL's (R − V)+ with its group's success rate as V: a map
   * the agent solved once in four is replayed three times as often as one it solved three times in
   * four, and a map every rollout solved is not stored, since the policy already plays it.
   */
  add(trajectories: readonly Trajectory[], select: AlgorithmConfig['selfImitationSelect'] = 'all'): number {
    const all = trajectories.filter((t) => t.success && t.turns.length > 0);
    const weighted = select === 'advantage' ? successAdvantages(all, trajectories) : (select === 'shortest' ? shortestOfEachGroup(all) : all).map((t) => ({ t, weight: 1 }));
    for (const { t, weight } of weighted) {
      this.episodes.push(t.turns.map((turn) => ({ context: [...turn.context], response: [...turn.response.tokens] })));
      this.weights.push(weight);
    }
    this.trim();
    this.added += weighted.length;
    return weighted.length;
  }

  /** `count` episodes drawn with replacement in proportion to their weights, as packed supervised rows; none when empty. */
  sample(rng: Rng, count: number): PackedTurns[] {
    if (this.episodes.length === 0) return [];
    return Array.from({ length: count }, () => packTurns(this.episodes[rng.categorical(this.weights)])).flat();
  }

  getState(): SelfImitationState {
    return { episodes: this.episodes, added: this.added, weights: this.weights };
  }

  setState(state: SelfImitationState): void {
    this.episodes = state.episodes.slice();
    this.weights = state.weights?.slice() ?? state.episodes.map(() => 1);
    this.added = state.added;
    this.trim();
  }

  private trim(): void {
    const excess = this.episodes.length - this.capacity;
    if (excess <= 0) return;
    this.episodes.splice(0, excess);
    this.weights.splice(0, excess);
  }
}

/**
 * Each of `successes` with the weight 1 − (its group's share of successes among `trajectories`),
 * those of weight 0 (every rollout of the group succeeded) left out. A group is one initial state's rollouts.
 */
function successAdvantages(successes: readonly Trajectory[], trajectories: readonly Trajectory[]): { t: Trajectory; weight: number }[] {
  const counts = new Map<number, { drawn: number; solved: number }>();
  for (const t of trajectories) {
    const c = counts.get(t.group) ?? { drawn: 0, solved: 0 };
    c.drawn += 1;
    if (t.success) c.solved += 1;
    counts.set(t.group, c);
  }
  return successes
    .map((t) => ({ t, weight: 1 - counts.get(t.group)!.solved / counts.get(t.group)!.drawn }))
    .filter(({ weight }) => weight > 0);
}

/** Of `trajectories`, those with their group's fewest actions (ties all kept). */
function shortestOfEachGroup(trajectories: readonly Trajectory[]): Trajectory[] {
  const fewest = new Map<number, number>();
  for (const t of trajectories) fewest.set(t.group, Math.min(fewest.get(t.group) ?? Infinity, t.actionCount));
  return trajectories.filter((t) => t.actionCount === fewest.get(t.group));
}
