import * as tf from '@tensorflow/tfjs';
import { useTestBackend } from '../../../test/support/tf';
import { GRID_EXTENT, gridCoordinates, gridLayout } from './grid-positions';
import { Tokenizer } from './tokenizer';
import { TransformerLM, disposeCache } from './transformer';

const tokenizer = new Tokenizer(['#', '_', 'P', 'X', 'O'], ['Up', 'Left']);
const layout = gridLayout(tokenizer.tokens);
const ids = (text: string) => tokenizer.encode(text);

describe('gridCoordinates', () => {
  it('numbers the cells after <obs> by line and column, and nothing else', () => {
    // "<bos> <obs> # P\n_ X\n<left> <resp> Up": the four cells are (1,1) (1,2) (2,1) (2,2).
    const sequence = ids('<bos><obs># P\n_ X\n<left><resp><answer> Up </answer>');
    const { rows, cols } = gridCoordinates(layout, sequence, 1, sequence.length);
    const cells = sequence.flatMap((_, t) => (rows[t] > 0 ? [[tokenizer.tokens[sequence[t]], rows[t], cols[t]]] : []));
    expect(cells).toEqual([['#', 1, 1], ['P', 1, 2], ['_', 2, 1], ['X', 2, 2]]);
    // "Up" after </answer> is outside any observation: no coordinates.
    expect(cols[sequence.length - 2]).toBe(0);
  });

  it('restarts at every <obs>, scans each row of a batch on its own and caps at GRID_EXTENT - 1', () => {
    const long = `<obs>${Array.from({ length: GRID_EXTENT + 2 }, () => '_').join(' ')}\n`;
    const a = ids(long);
    const b = ids('<pad>'.repeat(a.length - 3) + '<obs>P X');
    const { rows, cols } = gridCoordinates(layout, [...a, ...b], 2, a.length);
    expect(Math.max(...cols.slice(0, a.length))).toBe(GRID_EXTENT - 1);
    expect(Array.from(cols.slice(2 * a.length - 2))).toEqual([1, 2]);
    expect(Array.from(rows.slice(2 * a.length - 2))).toEqual([1, 1]);
  });
});

describe('TransformerLM with grid positions', () => {
  beforeAll(() => useTestBackend());

  it('gives the same logits after a cached prompt as from the whole sequence, and differs from a model without them', () => {
    const config = { vocabSize: tokenizer.size, contextLength: 64, layers: 1, dModel: 16, heads: 2, ffnMultiplier: 2, rope: true };
    const model = new TransformerLM({ ...config, gridPositions: true }, 5, [], layout);
    const plain = new TransformerLM(config, 5, []);
    const prompt = ids('<bos><obs># P\n_ X\n<left><resp>');
    const next = ids('<answer> Up </answer><eos><obs>P #\nX _\n<left><resp>');
    const whole = [...prompt, ...next];
    const full = tf.tidy(() => model.forward(tf.tensor2d([whole], [1, whole.length], 'int32')).logits.arraySync()[0][whole.length - 1]);
    const first = model.prefill([prompt]);
    first.logits.dispose();
    const extended = model.extend(first.cache, [next]);
    const cached = extended.logits.arraySync()[0];
    disposeCache(extended.cache);
    extended.logits.dispose();
    expect(Math.max(...cached.map((v, i) => Math.abs(v - full[i])))).toBeLessThan(1e-4);
    const without = tf.tidy(() => plain.forward(tf.tensor2d([whole], [1, whole.length], 'int32')).logits.arraySync()[0][whole.length - 1]);
    expect(Math.max(...without.map((v, i) => Math.abs(v - full[i])))).toBeGreaterThan(1e-4);
    expect(model.parameterCount() - plain.parameterCount()).toBe(2 * GRID_EXTENT * 16);
    model.dispose();
    plain.dispose();
  });
});
