import type { Rng } from '../random';
import { GRID_ACTIONS, type GridAction, neighbourCell, oppositeAction } from './grid';
import { CARVE_MASKS, TURN_PROBABILITY } from './sokoban-generator';
import { decodePosition, encodePosition, type SokobanState } from './sokoban-rules';

/** Room shape and difficulty of a room of the `hard` generator. */
export interface HardSokobanRoomSpec {
  readonly width: number;
  readonly height: number;
  readonly boxes: number;
  /** Longest reverse play = longest optimal solution (in moves) a room may get. */
  readonly reverseSteps: number;
}

/** Shortest optimal solution a generated room may have: one-move rooms teach nothing. */
export const MIN_SOLUTION_MOVES = 2;
/** Topologies tried before settling for a room with a box left on a target. */
const MAX_TOPOLOGY_ATTEMPTS = 200;

/**
 * The `hard` Sokoban generator, StarLab's own: harder rooms than RAGEN's (mean optimal solution
 * about 4.7 moves, no one-move rooms; a random agent solves about 9%). It carves a connected
 * floor inside the walls (a random walk with gym's masks), puts the boxes on random targets, then
 * plays backwards — the player walks and pulls boxes. The reverse search
 * here is exhaustive (breadth-first from every solved position, up to `reverseSteps` moves), so
 * a state's depth is exactly its optimal solution length and every room is solvable by
 * construction. Among states with no box on a target (preferred; otherwise as few as possible),
 * a solution length is drawn uniformly in [MIN_SOLUTION_MOVES, reverseSteps] (the nearest
 * available one, shorter on ties), and among those the state whose boxes are farthest from the
 * targets (gym's displacement score), ties drawn from `rng`. Degenerate topologies (no box can
 * leave its target) are redrawn.
 */
export function generateHardSokobanRoom(spec: HardSokobanRoomSpec, rng: Rng): SokobanState {
  let fallback: { room: SokobanState; onTargets: number } | null = null;
  for (let attempt = 0; attempt < MAX_TOPOLOGY_ATTEMPTS; attempt++) {
    const walls = carveTopology(spec.width, spec.height, rng);
    const floor = walls.flatMap((wall, cell) => (wall ? [] : [cell]));
    if (floor.length < spec.boxes + 2) continue;
    const targets = rng.shuffle(floor).slice(0, spec.boxes).sort((a, b) => a - b);
    const room = { width: spec.width, height: spec.height, walls, targets, boxes: targets, player: -1 };
    const choice = chooseReversePlayState(room, spec.reverseSteps, rng);
    if (!choice) continue;
    if (choice.onTargets === 0) return choice.room;
    if (!fallback || choice.onTargets < fallback.onTargets) fallback = choice;
  }
  if (fallback) return fallback.room;
  throw new Error(`sokoban: no playable ${spec.width}×${spec.height} room with ${spec.boxes} boxes`);
}

/**
 * Random walk inside the outer walls, carving gym-sokoban's masks; returns walls[cell]. It differs
 * from gym's walk in small ways (mask before step, no clamping of the start) and is kept as it
 * was so that `hard` rooms stay the same for every seed.
 */
function carveTopology(width: number, height: number, rng: Rng): boolean[] {
  const walls = new Array<boolean>(width * height).fill(true);
  const inside = (row: number, col: number) => row >= 1 && row <= height - 2 && col >= 1 && col <= width - 2;
  let row = 1 + rng.int(height - 2);
  let col = 1 + rng.int(width - 2);
  let direction: GridAction = rng.pick(GRID_ACTIONS);
  const steps = Math.floor(1.7 * (width + height));
  for (let step = 0; step < steps; step++) {
    if (rng.next() < TURN_PROBABILITY) direction = rng.pick(GRID_ACTIONS);
    for (const [dRow, dCol] of rng.pick(CARVE_MASKS)) {
      if (inside(row + dRow, col + dCol)) walls[(row + dRow) * width + col + dCol] = false;
    }
    const next = neighbourCell(row * width + col, direction, width, height);
    const nextRow = Math.floor(next / width);
    const nextCol = next % width;
    // gym clips the walker to the interior rather than turning it.
    if (next >= 0 && inside(nextRow, nextCol)) [row, col] = [nextRow, nextCol];
  }
  return walls;
}

interface ReverseChoice {
  room: SokobanState;
  onTargets: number;
}

/**
 * Breadth-first reverse play from every solved position (boxes on targets, player on any free
 * floor cell). A reverse move walks the player one cell; if a box stands right behind the player
 * it may be pulled along — the inverse of a push.
 */
function chooseReversePlayState(room: SokobanState, maxDepth: number, rng: Rng): ReverseChoice | null {
  const { width, height, walls, targets } = room;
  const cells = width * height;
  const depthOf = new Map<number, number>();
  let frontier: number[] = [];
  for (let player = 0; player < cells; player++) {
    if (walls[player] || targets.includes(player)) continue;
    const key = encodePosition(player, targets, cells);
    depthOf.set(key, 0);
    frontier.push(key);
  }
  for (let depth = 1; depth <= maxDepth && frontier.length > 0; depth++) {
    const next: number[] = [];
    for (const key of frontier) {
      const { player, boxes } = decodePosition(key, targets.length, cells);
      for (const action of GRID_ACTIONS) {
        const to = neighbourCell(player, action, width, height);
        if (to < 0 || walls[to] || boxes.includes(to)) continue;
        const successors = [encodePosition(to, boxes, cells)];
        const behind = neighbourCell(player, oppositeAction(action), width, height);
        const pulled = behind >= 0 ? boxes.indexOf(behind) : -1;
        if (pulled >= 0) {
          const moved = boxes.slice();
          moved[pulled] = player;
          successors.push(encodePosition(to, moved.sort((a, b) => a - b), cells));
        }
        for (const successor of successors) {
          if (depthOf.has(successor)) continue;
          depthOf.set(successor, depth);
          next.push(successor);
        }
      }
    }
    frontier = next;
  }
  return pickCandidate(room, depthOf, maxDepth, rng);
}

function pickCandidate(
  room: SokobanState,
  depthOf: Map<number, number>,
  maxDepth: number,
  rng: Rng,
): ReverseChoice | null {
  const { width, targets } = room;
  const cells = width * room.height;
  const manhattan = (a: number, b: number) =>
    Math.abs((a % width) - (b % width)) + Math.abs(Math.floor(a / width) - Math.floor(b / width));
  const distanceToTargets = (box: number) => targets.reduce((best, t) => Math.min(best, manhattan(t, box)), Infinity);
  const wantedDepth = MIN_SOLUTION_MOVES + rng.int(maxDepth - MIN_SOLUTION_MOVES + 1);
  // Lexicographic preference: fewest boxes on targets, depth nearest the drawn one (shorter on
  // ties), farthest boxes; exact ties collected and drawn below.
  const rank = (onTargets: number, depth: number, displacement: number) => [
    onTargets,
    Math.abs(depth - wantedDepth) * 2 + (depth > wantedDepth ? 1 : 0),
    -displacement,
  ];
  let best: number[] | null = null;
  let tied: number[] = [];
  for (const [key, depth] of depthOf) {
    if (depth < MIN_SOLUTION_MOVES) continue;
    const { boxes } = decodePosition(key, targets.length, cells);
    const onTargets = boxes.filter((box) => targets.includes(box)).length;
    const displacement = boxes.reduce((sum, box) => sum + distanceToTargets(box), 0);
    const score = rank(onTargets, depth, displacement);
    const order = best ? compareRanks(score, best) : -1;
    if (order < 0) {
      best = score;
      tied = [key];
    } else if (order === 0) tied.push(key);
  }
  if (!best) return null;
  // Map iteration follows insertion (BFS) order, so the draw is deterministic per seed.
  const { player, boxes } = decodePosition(rng.pick(tied), targets.length, cells);
  return { room: { ...room, player, boxes }, onTargets: best[0] };
}

function compareRanks(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}
