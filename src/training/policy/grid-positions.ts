import { SPECIAL_TOKENS, NEWLINE } from './tokenizer';

/**
 * Rows and columns of the cells of a rendered observation (the text after `<obs>`, one line per
 * grid row), for the model's optional grid-position embeddings. A model with only sequence
 * positions has to work out where a cell sits in the grid from its offset to the last `<obs>`,
 * which moves with the history in front of it; with a row and a column embedding added to each
 * cell token, "the box is left of the player" is a comparison of two embeddings it attends to.
 * Nothing here knows a task: any observation rendered as lines of tokens gets coordinates.
 */
export const GRID_EXTENT = 16;

export interface GridLayout {
  /** Token that opens an observation. */
  start: number;
  newline: number;
  /** Markup tokens (`<…>`): each ends the observation it follows. */
  markup: ReadonlySet<number>;
}

export function gridLayout(tokens: readonly string[]): GridLayout {
  const start = tokens.indexOf(SPECIAL_TOKENS.obs);
  const newline = tokens.indexOf(NEWLINE);
  if (start < 0 || newline < 0) throw new Error('grid positions need the <obs> and newline tokens');
  const markup = new Set(tokens.flatMap((t, id) => (t.length > 2 && t.startsWith('<') && t.endsWith('>') ? [id] : [])));
  return { start, newline, markup };
}

/**
 * Per token of B rows of T ids (row-major), its grid row and column, 1-based and capped at
 * GRID_EXTENT − 1; 0 for every token that is not a cell (markup, newlines, text outside an
 * observation). Each row is scanned on its own from outside an observation, so a segment fed
 * after a cached prompt gets the same coordinates as in the whole sequence: prompts end in
 * markup, never inside an observation.
 */
export function gridCoordinates(layout: GridLayout, ids: ArrayLike<number>, B: number, T: number): { rows: Int32Array; cols: Int32Array } {
  const rows = new Int32Array(B * T);
  const cols = new Int32Array(B * T);
  const cap = GRID_EXTENT - 1;
  for (let b = 0; b < B; b++) {
    let row = 0;
    let col = 0;
    for (let t = 0; t < T; t++) {
      const id = ids[b * T + t];
      if (id === layout.start) {
        row = 1;
        col = 1;
      } else if (layout.markup.has(id)) {
        row = 0;
      } else if (row > 0 && id === layout.newline) {
        row++;
        col = 1;
      } else if (row > 0) {
        rows[b * T + t] = Math.min(row, cap);
        cols[b * T + t] = Math.min(col, cap);
        col++;
      }
    }
  }
  return { rows, cols };
}

/** The layout a model of this config needs (undefined when it has no grid positions). */
export function gridLayoutFor(config: { gridPositions?: boolean }, tokens: readonly string[]): GridLayout | undefined {
  return config.gridPositions ? gridLayout(tokens) : undefined;
}
