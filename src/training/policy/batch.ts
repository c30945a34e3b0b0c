import * as tf from '@tensorflow/tfjs';

/**
 * One training sequence: its tokens and which of them the policy produced (the trained tokens).
 * A single turn is its context followed by its response; a whole episode packs every turn whose
 * context extends the previous one (see `packTurns`).
 */
export interface SequenceRow {
  tokens: readonly number[];
  /** Indices into `tokens` of the trained (response) tokens, ascending, all ≥ 1. */
  responseIndex: readonly number[];
}

/** What a policy saw and what it answered in one turn. */
export interface TurnSequence {
  context: readonly number[];
  response: readonly number[];
}

/** A packed row and the turns it holds. */
export interface PackedTurns extends SequenceRow {
  /** Indices of the packed turns in the input list. */
  turns: number[];
  /** Response tokens of each packed turn, in order. */
  turnLengths: number[];
}

/** A turn as a row of its own. */
export function turnRow(turn: TurnSequence): SequenceRow {
  return { tokens: [...turn.context, ...turn.response], responseIndex: turn.response.map((_, j) => turn.context.length + j) };
}

/**
 * Packs consecutive turns into one row wherever a turn's context is exactly the previous row's
 * tokens followed by something (the next observation): the row then carries every turn's
 * response in one sequence, as RAGEN trains a multi-turn episode, and a prefix is computed once
 * instead of once per turn. A turn whose context does not extend the row (the history was cut to
 * fit the context window, or the `sign` history rewrites past turns) starts a new row. Turns
 * without response tokens are skipped.
 */
export function packTurns(turns: readonly TurnSequence[]): PackedTurns[] {
  const rows: { tokens: number[]; responseIndex: number[]; turns: number[]; turnLengths: number[] }[] = [];
  turns.forEach((turn, index) => {
    if (turn.response.length === 0) return;
    const last = rows[rows.length - 1];
    if (last && extendsRow(turn.context, last.tokens)) {
      last.tokens.push(...turn.context.slice(last.tokens.length));
    } else {
      rows.push({ tokens: [...turn.context], responseIndex: [], turns: [], turnLengths: [] });
    }
    const row = rows[rows.length - 1];
    for (const token of turn.response) {
      row.responseIndex.push(row.tokens.length);
      row.tokens.push(token);
    }
    row.turns.push(index);
    row.turnLengths.push(turn.response.length);
  });
  return rows;
}

function extendsRow(context: readonly number[], tokens: readonly number[]): boolean {
  if (context.length <= tokens.length) return false;
  for (let i = 0; i < tokens.length; i++) if (context[i] !== tokens[i]) return false;
  return true;
}

/**
 * Rows packed for a teacher-forced forward pass: input = tokens without the last one,
 * right-padded to T; position t predicts token t+1, so trained token i of a row is predicted at
 * position i − 1.
 */
export class PackedBatch {
  readonly rows: number;
  readonly length: number;
  readonly inputs: Int32Array;
  readonly targets: Int32Array;
  /** Per row, the positions that predict its trained tokens. */
  readonly responsePositions: number[][];

  constructor(rows: readonly SequenceRow[]) {
    this.rows = rows.length;
    this.length = Math.max(1, ...rows.map((r) => r.tokens.length - 1));
    this.inputs = new Int32Array(this.rows * this.length);
    this.targets = new Int32Array(this.rows * this.length);
    this.responsePositions = rows.map((r) => r.responseIndex.map((i) => i - 1));
    rows.forEach((row, b) => {
      for (let t = 0; t < row.tokens.length - 1; t++) {
        this.inputs[b * this.length + t] = row.tokens[t];
        this.targets[b * this.length + t] = row.tokens[t + 1];
      }
    });
  }

  inputTensor(): tf.Tensor2D {
    return tf.tensor2d(this.inputs, [this.rows, this.length], 'int32');
  }

  /** One-hot targets [B, T, V]: the picked token at every position (masked later by weights). */
  targetOneHot(vocabSize: number): tf.Tensor3D {
    return tf.tidy(() => tf.oneHot(tf.tensor2d(this.targets, [this.rows, this.length], 'int32'), vocabSize) as tf.Tensor3D);
  }

  /** Scatters per-trained-token values (row b, token j) into a [B, T] tensor, zeros elsewhere. */
  perToken(values: readonly (readonly number[])[]): tf.Tensor2D {
    const data = new Float32Array(this.rows * this.length);
    values.forEach((rowValues, b) => {
      const positions = this.responsePositions[b];
      rowValues.forEach((v, j) => {
        data[b * this.length + positions[j]] = v;
      });
    });
    return tf.tensor2d(data, [this.rows, this.length]);
  }

  /** 0/1 mask of the positions that predict trained tokens, as nested arrays. */
  responseMask(): number[][] {
    return this.responsePositions.map((positions) => {
      const row = new Array<number>(this.length).fill(0);
      for (const p of positions) row[p] = 1;
      return row;
    });
  }

  /** Reads a [B, T] tensor back as per-trained-token values. */
  gatherResponse(tensor: tf.Tensor2D): number[][] {
    const data = tensor.dataSync();
    return this.responsePositions.map((positions, b) => positions.map((p) => data[b * this.length + p]));
  }
}

/**
 * Splits rows into consecutive chunks whose forward-and-backward pass stays within `budget`
 * (in the units of `cost`, which prices a chunk of `rows` rows padded to `length` tokens). Rows
 * are taken shortest first, so a chunk pads little. Every chunk holds at least one row: a row
 * that alone exceeds the budget is a chunk of its own. Returns indices into `rows`.
 */
export function chunkRows(rows: readonly SequenceRow[], cost: (rows: number, length: number) => number, budget: number): number[][] {
  const order = rows.map((_, i) => i).sort((a, b) => rows[a].tokens.length - rows[b].tokens.length);
  const chunks: number[][] = [];
  let current: number[] = [];
  for (const index of order) {
    const length = rows[index].tokens.length;
    if (current.length > 0 && cost(current.length + 1, length) > budget) {
      chunks.push(current);
      current = [];
    }
    current.push(index);
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}
