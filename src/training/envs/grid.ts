/**
 * Shared geometry of the grid worlds (FrozenLake, Sokoban): row-major cell indices
 * (`cell = row * width + col`) and the four moves RAGEN names Up/Down/Left/Right.
 */
export const GRID_ACTIONS = ['Up', 'Down', 'Left', 'Right'] as const;

/** One of the four grid moves. */
export type GridAction = (typeof GRID_ACTIONS)[number];

const DELTAS: Readonly<Record<GridAction, readonly [number, number]>> = {
  Up: [-1, 0],
  Down: [1, 0],
  Left: [0, -1],
  Right: [0, 1],
};

/** The cell one move away, or -1 when the move leaves the grid. */
export function neighbourCell(cell: number, action: GridAction, width: number, height: number): number {
  const [dRow, dCol] = DELTAS[action];
  const row = Math.floor(cell / width) + dRow;
  const col = (cell % width) + dCol;
  if (row < 0 || row >= height || col < 0 || col >= width) return -1;
  return row * width + col;
}

/** The move in the opposite direction (a pull in reverse play is the inverse of a push). */
export function oppositeAction(action: GridAction): GridAction {
  return OPPOSITE[action];
}

const OPPOSITE: Readonly<Record<GridAction, GridAction>> = { Up: 'Down', Down: 'Up', Left: 'Right', Right: 'Left' };

/**
 * The three moves a slippery step can realise, in gym FrozenLake's order for action a:
 * [(a − 1) mod 4, a, (a + 1) mod 4] over gym's LEFT, DOWN, RIGHT, UP numbering — the intended
 * move in the middle, the two perpendicular moves around it.
 */
export function slipOutcomes(action: GridAction): readonly [GridAction, GridAction, GridAction] {
  return SLIP_OUTCOMES[action];
}

const SLIP_OUTCOMES: Readonly<Record<GridAction, readonly [GridAction, GridAction, GridAction]>> = {
  Left: ['Up', 'Left', 'Down'],
  Down: ['Left', 'Down', 'Right'],
  Right: ['Down', 'Right', 'Up'],
  Up: ['Right', 'Up', 'Left'],
};

/** Renders a grid as rows of single-character symbols joined by "\n" (RAGEN's text mode). */
export function renderGrid(width: number, height: number, symbolAt: (cell: number) => string): string {
  const rows: string[] = [];
  for (let row = 0; row < height; row++) {
    let line = '';
    for (let col = 0; col < width; col++) line += symbolAt(row * width + col);
    rows.push(line);
  }
  return rows.join('\n');
}
