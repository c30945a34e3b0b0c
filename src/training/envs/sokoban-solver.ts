import { GRID_ACTIONS, type GridAction, neighbourCell } from './grid';
import { encodePosition, isSolved, type SokobanState } from './sokoban-rules';

/** Default search depth of the solver; generated rooms need far fewer moves. */
export const SOKOBAN_SOLVER_MAX_DEPTH = 100;

/**
 * Shortest solution of a Sokoban position by breadth-first search over (player cell, box cells),
 * one node per single move (so the plan is optimal in moves, RAGEN's action count, not in
 * pushes). Returns the action names, [] when already solved, or null when no solution of at
 * most `maxDepth` moves exists.
 */
export function solveSokoban(state: SokobanState, maxDepth = SOKOBAN_SOLVER_MAX_DEPTH): GridAction[] | null {
  if (isSolved(state)) return [];
  const { width, height, walls } = state;
  const cells = width * height;
  const isTarget = new Uint8Array(cells);
  for (const target of state.targets) isTarget[target] = 1;

  // Search nodes in BFS order; parent/action arrays rebuild the plan.
  const players: number[] = [state.player];
  const boxSets: number[][] = [state.boxes.slice()];
  const parents: number[] = [-1];
  const actions: number[] = [-1];
  const depths: number[] = [0];
  const seen = new Set<number>([encodePosition(state.player, state.boxes, cells)]);

  for (let head = 0; head < players.length; head++) {
    if (depths[head] >= maxDepth) break;
    const player = players[head];
    const boxes = boxSets[head];
    for (let a = 0; a < GRID_ACTIONS.length; a++) {
      const next = neighbourCell(player, GRID_ACTIONS[a], width, height);
      if (next < 0 || walls[next]) continue;
      let moved = boxes;
      const boxIndex = boxes.indexOf(next);
      if (boxIndex >= 0) {
        const beyond = neighbourCell(next, GRID_ACTIONS[a], width, height);
        if (beyond < 0 || walls[beyond] || boxes.includes(beyond)) continue;
        moved = boxes.slice();
        moved[boxIndex] = beyond;
        moved.sort((x, y) => x - y);
      }
      const key = encodePosition(next, moved, cells);
      if (seen.has(key)) continue;
      seen.add(key);
      players.push(next);
      boxSets.push(moved);
      parents.push(head);
      actions.push(a);
      depths.push(depths[head] + 1);
      if (moved !== boxes && moved.every((box) => isTarget[box])) return planTo(players.length - 1, parents, actions);
    }
  }
  return null;
}

function planTo(node: number, parents: readonly number[], actions: readonly number[]): GridAction[] {
  const plan: GridAction[] = [];
  for (let at = node; parents[at] >= 0; at = parents[at]) plan.push(GRID_ACTIONS[actions[at]]);
  return plan.reverse();
}
