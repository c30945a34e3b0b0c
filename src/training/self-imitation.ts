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
   */
  add(trajectories: readonly Trajectory[], select: AlgorithmConfig['selfImitationSelect'] = 'all'): number {
    const all = trajectories.filter((t) => t.success && t.turns.length > 0);
    const successes = select === 'shortest' ? shortestOfEachGroup(all) : all;
    for (const t of successes) this.episodes.push(t.turns.map((turn) => ({ context: [...turn.context], response: [...turn.response.tokens] })));
    if (this.episodes.length > this.capacity) this.episodes.splice(0, this.episodes.length - this.capacity);
    this.added += successes.length;
    return successes.length;
  }

  /** `count` episodes drawn uniformly with replacement, as packed supervised rows; none when empty. */
  sample(rng: Rng, count: number): PackedTurns[] {
    if (this.episodes.length === 0) return [];
    return Array.from({ length: count }, () => packTurns(this.episodes[rng.int(this.episodes.length)])).flat();
  }

  getState(): SelfImitationState {
    return { episodes: this.episodes, added: this.added };
  }

  setState(state: SelfImitationState): void {
    this.episodes = state.episodes.slice(-this.capacity);
    this.added = state.added;
  }
}

/** Of `trajectories`, those with their group's fewest actions (ties all kept). */
function shortestOfEachGroup(trajectories: readonly Trajectory[]): Trajectory[] {
  const fewest = new Map<number, number>();
  for (const t of trajectories) fewest.set(t.group, Math.min(fewest.get(t.group) ?? Infinity, t.actionCount));
  return trajectories.filter((t) => t.actionCount === fewest.get(t.group));
}
