import * as tf from '@tensorflow/tfjs';

/** One training sequence: what the policy saw and what it answered. */
export interface SequenceRow {
  context: readonly number[];
  response: readonly number[];
}

/**
 * Rows packed for a teacher-forced forward pass: input = (context ++ response) without its last
 * token, right-padded to T; position t predicts token t+1. A response token j of row b is
 * predicted at position `context.length − 1 + j`.
 */
export class PackedBatch {
  readonly rows: number;
  readonly length: number;
  readonly inputs: Int32Array;
  readonly targets: Int32Array;
  /** First position of each row that predicts a response token. */
  readonly responseStart: number[];
  readonly responseLength: number[];

  constructor(rows: readonly SequenceRow[]) {
    this.rows = rows.length;
    this.length = Math.max(1, ...rows.map((r) => r.context.length + r.response.length - 1));
    this.inputs = new Int32Array(this.rows * this.length);
    this.targets = new Int32Array(this.rows * this.length);
    this.responseStart = rows.map((r) => r.context.length - 1);
    this.responseLength = rows.map((r) => r.response.length);
    rows.forEach((row, b) => {
      const sequence = [...row.context, ...row.response];
      for (let t = 0; t < sequence.length - 1; t++) {
        this.inputs[b * this.length + t] = sequence[t];
        this.targets[b * this.length + t] = sequence[t + 1];
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

  /** Scatters per-response-token values (row b, token j) into a [B, T] tensor, zeros elsewhere. */
  perToken(values: readonly (readonly number[])[]): tf.Tensor2D {
    const data = new Float32Array(this.rows * this.length);
    values.forEach((rowValues, b) => {
      rowValues.forEach((v, j) => {
        data[b * this.length + this.responseStart[b] + j] = v;
      });
    });
    return tf.tensor2d(data, [this.rows, this.length]);
  }

  /** 0/1 mask of the positions that predict response tokens, as nested arrays. */
  responseMask(): number[][] {
    return this.responseStart.map((start, b) => {
      const row = new Array<number>(this.length).fill(0);
      for (let j = 0; j < this.responseLength[b]; j++) row[start + j] = 1;
      return row;
    });
  }

  /** Reads a [B, T] tensor back as per-response-token values. */
  gatherResponse(tensor: tf.Tensor2D): number[][] {
    const data = tensor.dataSync();
    return this.responseStart.map((start, b) =>
      Array.from({ length: this.responseLength[b] }, (_, j) => data[b * this.length + start + j]),
    );
  }
}
