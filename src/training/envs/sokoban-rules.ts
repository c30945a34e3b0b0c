import { type GridAction, neighbourCell, renderGrid } from './grid';

/**
 * A Sokoban position: the fixed room (walls, targets) and the moving parts (player, boxes).
 * Cells are row-major indices; `targets` and `boxes` are sorted. Immutable: moves return a new
 * state, so states can be shared between clones and used as search nodes.
 */
export interface SokobanState {
  readonly width: number;
  readonly height: number;
  readonly walls: readonly boolean[];
  readonly targets: readonly number[];
  readonly boxes: readonly number[];
  readonly player: number;
}

/** RAGEN's Sokoban symbols (gym-sokoban's tiles in text form). */
export const SOKOBAN_LEGEND: Readonly<Record<string, string>> = {
  '#': 'wall',
  _: 'floor',
  O: 'target',
  X: 'box',
  '√': 'box on target',
  P: 'player',
  S: 'player on target',
};

/** Observation tokens: the single-character symbols and the row break. */
export const SOKOBAN_VOCABULARY: readonly string[] = [...Object.keys(SOKOBAN_LEGEND), '\n'];

/** Outcome of one move: the new state, whether anything moved, and the box that was pushed. */
export interface SokobanMove {
  readonly state: SokobanState;
  readonly effective: boolean;
  /** Cells of the pushed box before and after the push; null when no box moved. */
  readonly push: { readonly from: number; readonly to: number } | null;
}

/** True when the cell is inside the room and not a wall. */
export function isFloor(state: SokobanState, cell: number): boolean {
  return cell >= 0 && !state.walls[cell];
}

/**
 * gym-sokoban's push action: the player steps into a free cell, or pushes the box in front of it
 * when the cell behind the box is free; otherwise nothing moves (an ineffective action).
 */
export function moveSokoban(state: SokobanState, action: GridAction): SokobanMove {
  const { width, height, boxes } = state;
  const next = neighbourCell(state.player, action, width, height);
  if (!isFloor(state, next)) return { state, effective: false, push: null };
  if (!boxes.includes(next)) return { state: { ...state, player: next }, effective: true, push: null };
  const beyond = neighbourCell(next, action, width, height);
  if (!isFloor(state, beyond) || boxes.includes(beyond)) return { state, effective: false, push: null };
  const moved = boxes.map((box) => (box === next ? beyond : box)).sort((a, b) => a - b);
  return { state: { ...state, player: next, boxes: moved }, effective: true, push: { from: next, to: beyond } };
}

/** Number of boxes standing on targets (gym-sokoban rewards its change). */
export function boxesOnTargets(state: SokobanState): number {
  return state.boxes.filter((box) => state.targets.includes(box)).length;
}

/** All boxes on targets: the episode ends with success. */
export function isSolved(state: SokobanState): boolean {
  return boxesOnTargets(state) === state.targets.length;
}

/** Text form: rows of `# _ O X √ P S` joined by "\n". */
export function renderSokoban(state: SokobanState): string {
  const { width, height, walls, targets, boxes, player } = state;
  return renderGrid(width, height, (cell) => {
    const target = targets.includes(cell);
    if (cell === player) return target ? 'S' : 'P';
    if (boxes.includes(cell)) return target ? '√' : 'X';
    if (walls[cell]) return '#';
    return target ? 'O' : '_';
  });
}

/** Parses the text form back into a state (hand-built rooms for tests and curated levels). */
export function parseSokoban(rows: readonly string[]): SokobanState {
  const height = rows.length;
  const width = rows[0]?.length ?? 0;
  const walls: boolean[] = [];
  const targets: number[] = [];
  const boxes: number[] = [];
  const players: number[] = [];
  rows.forEach((line, row) => {
    const symbols = [...line];
    if (symbols.length !== width) throw new Error(`sokoban: row ${row} has ${symbols.length} tiles, expected ${width}`);
    symbols.forEach((symbol, col) => {
      const cell = row * width + col;
      if (!(symbol in SOKOBAN_LEGEND)) throw new Error(`sokoban: unknown tile '${symbol}'`);
      walls.push(symbol === '#');
      if ('O√S'.includes(symbol)) targets.push(cell);
      if ('X√'.includes(symbol)) boxes.push(cell);
      if ('PS'.includes(symbol)) players.push(cell);
    });
  });
  if (players.length !== 1) throw new Error(`sokoban: a room needs exactly one player, found ${players.length}`);
  if (boxes.length === 0 || boxes.length !== targets.length) {
    throw new Error(`sokoban: a room needs as many boxes as targets (at least one): ${boxes.length}/${targets.length}`);
  }
  return { width, height, walls, targets, boxes, player: players[0] };
}

/**
 * Packs (player, sorted boxes) into one integer for search: digits in base `cells` (the number
 * of cells in the room). With at most 3 boxes in a 10×10 room the key stays below 100^4, well
 * inside the exact integer range.
 */
export function encodePosition(player: number, boxes: readonly number[], cells: number): number {
  let key = 0;
  for (const box of boxes) key = key * cells + box;
  return key * cells + player;
}

/** Inverse of `encodePosition` for a known box count. */
export function decodePosition(key: number, boxCount: number, cells: number): { player: number; boxes: number[] } {
  const player = key % cells;
  let rest = (key - player) / cells;
  const boxes = new Array<number>(boxCount);
  for (let i = boxCount - 1; i >= 0; i--) {
    boxes[i] = rest % cells;
    rest = (rest - boxes[i]) / cells;
  }
  return { player, boxes };
}
