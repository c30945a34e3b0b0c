import type { Rng } from '../random';
import { GRID_ACTIONS, type GridAction, neighbourCell, oppositeAction } from './grid';
import type { SokobanState } from './sokoban-rules';

/** Room shape of a generated Sokoban level and the depth of its reverse-play search. */
export interface SokobanRoomSpec {
  readonly width: number;
  readonly height: number;
  readonly boxes: number;
  /** Depth limit of the reverse-play depth-first search (RAGEN's `search_depth`, 300 by default). */
  readonly searchDepth: number;
}

/** gym-sokoban's topology walk: probability of turning at each step. */
export const TURN_PROBABILITY = 0.35;

/**
 * gym-sokoban's carving masks (3×3 around the walker, as (row, column) offsets), which open
 * corridors and small rooms rather than single-cell tunnels.
 */
export const CARVE_MASKS: readonly (readonly [number, number])[][] = [
  [[0, -1], [0, 0], [0, 1]],
  [[-1, 0], [0, 0], [1, 0]],
  [[0, -1], [0, 0], [1, 0]],
  [[0, -1], [0, 0], [1, -1], [1, 0]],
  [[0, 0], [0, 1], [1, 0]],
];

/** Topologies tried per room before the whole draw starts again (gym's `tries`). */
const TOPOLOGY_TRIES = 4;
/** gym's cap on explored reverse-play states. */
const MAX_EXPLORED_STATES = 300_000;
/** Redraws of a room whose every topology was degenerate, before giving up (never reached in practice). */
const MAX_DRAWS = 1000;
/** After reverse play: chance the player wanders off at all (0.8 when the box moved one cell), to go on after each step, and the most steps. */
const WANDER = { probability: 0.5, probabilityNearBox: 0.8, continueProbability: 0.5, maxSteps: 3 } as const;

/**
 * RAGEN's Sokoban room generator (its `generate_room`, adapted from gym-sokoban, Schrader 2018):
 *   1. carve a floor by a random walk with gym's masks (⌊1.7·(width + height)⌋ steps);
 *   2. put the player on a random floor cell, then each box on a random free floor cell, which
 *      becomes its target;
 *   3. reverse play: a depth-first search in which every move drags along a box standing right
 *      behind the player (the inverse of a push), scoring each new state by
 *      (box swaps) × (Σ Manhattan distance of each box from its own target), 0 unless every
 *      target is free; the first state of the highest score is kept — for one box, the box
 *      pulled farthest from its target, the player next to it;
 *   4. move the player 1–3 random steps (with probability 0.8 when the box is one cell from its
 *      target, else 0.5; each further step with probability 0.5) onto free cells it has not
 *      visited, so the player is not always glued to the box.
 * A topology where no box can leave its target is redrawn (up to 4 per draw, then the whole draw
 * restarts, as RAGEN re-seeds). On 6×6 rooms with one box the optimal solution is about 4 moves
 * on average, about one room in ten is solved by a single move, and a random well-formed agent
 * solves about 18%.
 */
export function generateSokobanRoom(spec: SokobanRoomSpec, rng: Rng): SokobanState {
  for (let draw = 0; draw < MAX_DRAWS; draw++) {
    for (let attempt = 0; attempt < TOPOLOGY_TRIES; attempt++) {
      const walls = carveTopology(spec.width, spec.height, rng);
      const placed = placePlayerAndTargets(walls, spec.boxes, rng);
      if (!placed) break; // gym raises here; RAGEN then draws again with another seed
      const room: SokobanState = { width: spec.width, height: spec.height, walls, targets: placed.targets, boxes: placed.targets, player: placed.player };
      const best = reversePlay(room, spec.searchDepth);
      if (best.displacement > 0) return wander(best.state, best.displacement === 1 ? WANDER.probabilityNearBox : WANDER.probability, rng);
    }
  }
  throw new Error(`sokoban: no playable ${spec.width}×${spec.height} room with ${spec.boxes} boxes`);
}

/**
 * gym's `room_topology_generation`: a walker starts anywhere inside, turns with probability 0.35
 * before each step, is clamped to the interior, and opens one random mask around itself; the
 * border is wall whatever the masks opened.
 */
export function carveTopology(width: number, height: number, rng: Rng): boolean[] {
  const open = new Array<boolean>(width * height).fill(false);
  const directions: readonly [number, number][] = [[1, 0], [0, 1], [-1, 0], [0, -1]];
  let direction = rng.pick(directions);
  let row = 1 + rng.int(height - 1);
  let col = 1 + rng.int(width - 1);
  const steps = Math.floor(1.7 * (width + height));
  for (let step = 0; step < steps; step++) {
    if (rng.next() < TURN_PROBABILITY) direction = rng.pick(directions);
    row = Math.max(1, Math.min(height - 2, row + direction[0]));
    col = Math.max(1, Math.min(width - 2, col + direction[1]));
    for (const [dRow, dCol] of rng.pick(CARVE_MASKS)) open[(row + dRow) * width + col + dCol] = true;
  }
  return open.map((isOpen, cell) => {
    const r = Math.floor(cell / width);
    const c = cell % width;
    return !isOpen || r === 0 || c === 0 || r === height - 1 || c === width - 1;
  });
}

/** gym's `place_boxes_and_player`; null when the floor has no room for them (gym raises). */
function placePlayerAndTargets(walls: readonly boolean[], boxes: number, rng: Rng): { player: number; targets: number[] } | null {
  const floor = walls.flatMap((wall, cell) => (wall ? [] : [cell]));
  if (floor.length <= boxes + 1) return null;
  const player = rng.pick(floor);
  const free = floor.filter((cell) => cell !== player);
  const targets: number[] = [];
  for (let b = 0; b < boxes; b++) targets.push(free.splice(rng.int(free.length), 1)[0]);
  return { player, targets: targets.sort((a, c) => a - c) };
}

interface ReversePlayResult {
  state: SokobanState;
  /** Σ Manhattan distance of each box from its own target. */
  displacement: number;
}

/**
 * gym's `reverse_playing`/`depth_first_search`: explores reverse moves depth first (Up, Down,
 * Left, Right), each state once, to `searchDepth` moves or MAX_EXPLORED_STATES states. Box
 * identities are tracked (each box's own target) for the displacement; a "swap" is a pull of a
 * different box than the last one pulled.
 */
function reversePlay(start: SokobanState, searchDepth: number): ReversePlayResult {
  const { width, height, walls, targets } = start;
  const explored = new Set<string>();
  const manhattan = (a: number, b: number) => Math.abs((a % width) - (b % width)) + Math.abs(Math.floor(a / width) - Math.floor(b / width));
  /** boxAt[i]: cell of the box that started on targets[i]. */
  let best = { score: -1, player: start.player, boxAt: [...targets] };

  const search = (player: number, boxAt: number[], swaps: number, lastPulled: number, ttl: number): void => {
    ttl -= 1;
    if (ttl <= 0 || explored.size >= MAX_EXPLORED_STATES) return;
    const key = `${player}:${[...boxAt].sort((a, b) => a - b).join(',')}`;
    if (explored.has(key)) return;
    explored.add(key);
    const targetsFree = targets.every((t) => t !== player && !boxAt.includes(t));
    const displacement = boxAt.reduce((sum, cell, i) => sum + manhattan(cell, targets[i]), 0);
    const score = targetsFree ? swaps * displacement : 0;
    if (score > best.score) best = { score, player, boxAt: [...boxAt] };
    for (const action of GRID_ACTIONS) {
      const next = reverseMove(player, boxAt, action, lastPulled);
      search(next.player, next.boxAt, next.lastPulled !== lastPulled ? swaps + 1 : swaps, next.lastPulled, ttl);
    }
  };

  const reverseMove = (player: number, boxAt: number[], action: GridAction, lastPulled: number) => {
    const to = neighbourCell(player, action, width, height);
    if (to < 0 || walls[to] || boxAt.includes(to)) return { player, boxAt, lastPulled };
    const behind = neighbourCell(player, oppositeAction(action), width, height);
    const pulled = behind >= 0 ? boxAt.indexOf(behind) : -1;
    if (pulled < 0) return { player: to, boxAt, lastPulled };
    const moved = [...boxAt];
    moved[pulled] = player;
    return { player: to, boxAt: moved, lastPulled: pulled };
  };

  search(start.player, [...targets], 0, -1, searchDepth);
  const displacement = best.boxAt.reduce((sum, cell, i) => sum + manhattan(cell, targets[i]), 0);
  return { state: { ...start, player: best.player, boxes: [...best.boxAt].sort((a, b) => a - b) }, displacement };
}

/** RAGEN's `add_random_player_movement`: a short random walk over free, unvisited cells. */
function wander(state: SokobanState, probability: number, rng: Rng): SokobanState {
  if (rng.next() > probability) return state;
  const { width, height, walls, boxes } = state;
  const visited = [state.player];
  let player = state.player;
  for (let steps = 0; steps < WANDER.maxSteps; ) {
    const options = GRID_ACTIONS.map((action) => neighbourCell(player, action, width, height)).filter(
      (cell) => cell >= 0 && !walls[cell] && !boxes.includes(cell) && !visited.includes(cell),
    );
    if (options.length === 0) break;
    player = rng.pick(options);
    visited.push(player);
    steps++;
    if (steps >= WANDER.maxSteps || rng.next() > WANDER.continueProbability) break;
  }
  return { ...state, player };
}
