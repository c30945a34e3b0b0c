import { Type, type Static } from '@sinclair/typebox';
import { Rng } from '../random';
import { EnvNotResetError, EpisodeDoneError, invalidActionResult, matchAction, resolveEnvConfig } from './common';
import { GRID_ACTIONS } from './grid';
import { generateSokobanRoom } from './sokoban-generator';
import { generateHardSokobanRoom } from './sokoban-generator-hard';
import {
  boxesOnTargets,
  isSolved,
  moveSokoban,
  parseSokoban,
  renderSokoban,
  SOKOBAN_LEGEND,
  SOKOBAN_VOCABULARY,
  type SokobanState,
} from './sokoban-rules';
import type { Env, StepResult } from './types';

/** TypeBox schema of the Sokoban config (RAGEN: 6×6, 1 box). */
export const SokobanConfigSchema = Type.Object(
  {
    width: Type.Optional(
      Type.Integer({ default: 6, minimum: 5, maximum: 10, description: 'Room width, outer walls included' }),
    ),
    height: Type.Optional(
      Type.Integer({ default: 6, minimum: 5, maximum: 10, description: 'Room height, outer walls included' }),
    ),
    boxes: Type.Optional(Type.Integer({ default: 1, minimum: 1, maximum: 3, description: 'Boxes (and targets)' })),
    difficulty: Type.Optional(
      Type.Union([Type.Literal('ragen'), Type.Literal('hard')], {
        default: 'ragen',
        description:
          "ragen: RAGEN's generator (box pulled farthest from its target, then 1–3 random player steps; mean optimal " +
          'solution ≈ 4 moves, ~11% one-move rooms); hard: optimal solution length drawn uniformly in 2..reverseSteps',
      }),
    ),
    searchDepth: Type.Optional(
      Type.Integer({ default: 300, minimum: 10, maximum: 300, description: "ragen rooms: depth limit of the reverse-play search (RAGEN's search_depth)" }),
    ),
    reverseSteps: Type.Optional(
      Type.Integer({
        default: 8,
        minimum: 2,
        maximum: 20,
        description: 'hard rooms: depth of the reverse play = longest optimal solution in moves',
      }),
    ),
  },
  { additionalProperties: false },
);

/** A complete Sokoban config (every field resolved). */
export type SokobanConfig = Required<Static<typeof SokobanConfigSchema>>;

/** RAGEN's default room (its SimpleSokoban): 6×6 with walls, 1 box, RAGEN's generator. */
export const SOKOBAN_DEFAULTS: SokobanConfig = { width: 6, height: 6, boxes: 1, difficulty: 'ragen', searchDepth: 300, reverseSteps: 8 };

/** gym-sokoban's rewards, as RAGEN uses them. */
export const SOKOBAN_REWARDS = { step: -0.1, boxOnTarget: 1, boxOffTarget: -1, solved: 10 } as const;

const ROOM_STREAM = 301;

/**
 * Sokoban as in RAGEN (gym-sokoban's rules and rewards, text observations): push every box onto
 * a target. Each action costs −0.1 (also when nothing moves); a box pushed onto a target +1, off
 * a target −1; all boxes on targets +10 and the episode ends with success. Rooms come from the
 * seed by reverse play (RAGEN's `generateSokobanRoom` by default, or `generateHardSokobanRoom`),
 * so every room is solvable.
 *
 * render(): rows of `# _ O X √ P S` joined by "\n". No dynamics randomness: the seed only picks
 * the room. `step()` after the episode ended throws `EpisodeDoneError`; an unknown action is not
 * executed (actionValid false, reward 0, no step penalty — the caller applies the format penalty).
 */
export class SokobanEnv implements Env {
  readonly id = 'sokoban';
  readonly actionNames = GRID_ACTIONS;
  readonly symbolLegend = SOKOBAN_LEGEND;
  readonly vocabulary = SOKOBAN_VOCABULARY;
  readonly config: SokobanConfig;
  private room: SokobanState | null = null;

  constructor(config: Partial<SokobanConfig> = {}) {
    this.config = resolveEnvConfig('sokoban', SokobanConfigSchema, SOKOBAN_DEFAULTS, config);
  }

  /** The current position (for the BFS expert and tests). */
  get state(): SokobanState {
    if (!this.room) throw new EnvNotResetError(this.id);
    return this.room;
  }

  get done(): boolean {
    return this.room !== null && isSolved(this.room);
  }

  reset(seed: number): string {
    const rng = new Rng(seed, ROOM_STREAM);
    this.room = this.config.difficulty === 'hard' ? generateHardSokobanRoom(this.config, rng) : generateSokobanRoom(this.config, rng);
    return this.render();
  }

  /** Starts an episode in a hand-drawn room (tests, curated levels). */
  resetToRoom(rows: readonly string[]): string {
    this.room = parseSokoban(rows);
    return this.render();
  }

  step(action: string): StepResult {
    const before = this.state;
    if (this.done) throw new EpisodeDoneError(this.id);
    const direction = matchAction(action, GRID_ACTIONS);
    if (direction === undefined) {
      return invalidActionResult(this.render());
    }
    const { state: after, effective } = moveSokoban(before, direction);
    this.room = after;
    // gym-sokoban rewards the change in the number of boxes on targets, so a push from one target
    // onto another earns nothing.
    const change = boxesOnTargets(after) - boxesOnTargets(before);
    const solved = isSolved(after);
    let reward: number = SOKOBAN_REWARDS.step;
    if (change > 0) reward += SOKOBAN_REWARDS.boxOnTarget;
    if (change < 0) reward += SOKOBAN_REWARDS.boxOffTarget;
    if (solved) reward += SOKOBAN_REWARDS.solved;
    return {
      observation: this.render(),
      reward,
      done: solved,
      info: { success: solved, actionValid: true, actionEffective: effective },
    };
  }

  render(): string {
    return renderSokoban(this.state);
  }

  clone(): SokobanEnv {
    const copy = new SokobanEnv(this.config);
    copy.room = this.room;
    return copy;
  }
}
