import { entropyShapedAdvantages, gae, groupZScores } from './advantages';

describe('gae', () => {
  it('gives A = R − V with γ = λ = 1 and the return on the last token', () => {
    const { advantages, returns } = gae([0, 0, 1], [0.2, 0.5, 0.4], 1, 1);
    expect(advantages).toHaveLength(3);
    expect(returns).toHaveLength(3);
    expect(advantages[0]).toBeCloseTo(1 - 0.2, 12);
    expect(advantages[1]).toBeCloseTo(1 - 0.5, 12);
    expect(advantages[2]).toBeCloseTo(1 - 0.4, 12);
    returns.forEach((r) => expect(r).toBeCloseTo(1, 12));
  });

  it('discounts with γ = 0.9, λ = 0.95 over three tokens', () => {
    const { advantages, returns } = gae([0, 0.5, 1], [0.2, 0.3, 0.4], 0.9, 0.95);
    const a2 = 1 + 0.9 * 0 - 0.4; // terminal: V_3 = 0
    const a1 = 0.5 + 0.9 * 0.4 - 0.3 + 0.9 * 0.95 * a2;
    const a0 = 0 + 0.9 * 0.3 - 0.2 + 0.9 * 0.95 * a1;
    expect(advantages[2]).toBeCloseTo(a2, 12);
    expect(advantages[1]).toBeCloseTo(a1, 12);
    expect(advantages[0]).toBeCloseTo(a0, 12);
    expect(returns[0]).toBeCloseTo(a0 + 0.2, 12);
    expect(returns[2]).toBeCloseTo(a2 + 0.4, 12);
  });

  it('rejects rewards and values of different lengths', () => {
    expect(() => gae([0, 1], [0.5], 1, 1)).toThrow(RangeError);
  });
});

describe('groupZScores', () => {
  it('z-scores each group with the unbiased std and zeroes flat groups', () => {
    const scores = groupZScores([[1, 0, 0, 1], [0.3, 0.3, 0.3], [5], [2, 0]]);
    expect(scores.map((g) => g.length)).toEqual([4, 3, 1, 2]);
    // group 0: mean 0.5, unbiased std √((4 · 0.25) / 3)
    const sigma0 = Math.sqrt((4 * 0.25) / 3);
    expect(scores[0][0]).toBeCloseTo((1 - 0.5) / (sigma0 + 1e-6), 10);
    expect(scores[0][1]).toBeCloseTo((0 - 0.5) / (sigma0 + 1e-6), 10);
    expect(scores[1]).toEqual([0, 0, 0]);
    expect(scores[2]).toEqual([0]);
    // group 3: mean 1, unbiased std √((1 + 1) / 1)
    expect(scores[3][0]).toBeCloseTo((2 - 1) / (Math.SQRT2 + 1e-6), 10);
  });

  it('uses the given eps', () => {
    expect(groupZScores([[2, 0]], 0.5)[0][0]).toBeCloseTo((2 - 1) / (Math.SQRT2 + 0.5), 10);
  });
});

describe('entropyShapedAdvantages (AEPO)', () => {
  // Entropies 0.2, 0.4 | 0.6 over two rows: mean 0.4, unbiased std √((0.04 + 0 + 0.04) / 2) = 0.2,
  // so Ĥ = [−1, 0 | 1]; with α = 0.3: A' = A·(1 + 0.3·Ĥ).
  it('scales each token by 1 + α·Ĥ, Ĥ standardised over all the tokens given', () => {
    const shaped = entropyShapedAdvantages([[1, 1], [-1]], [[0.2, 0.4], [0.6]], 0.3);
    expect(shaped.map((row) => row.length)).toEqual([2, 1]);
    expect(shaped[0][0]).toBeCloseTo(1 * (1 + 0.3 * -1), 6);
    expect(shaped[0][1]).toBeCloseTo(1 * (1 + 0.3 * 0), 6);
    expect(shaped[1][0]).toBeCloseTo(-1 * (1 + 0.3 * 1), 6);
  });

  it('leaves advantages unchanged when α = 0 or the entropy is constant', () => {
    expect(entropyShapedAdvantages([[2, -1]], [[0.2, 0.6]], 0)).toEqual([[2, -1]]);
    expect(entropyShapedAdvantages([[2, -1]], [[0.5, 0.5]], 0.3)).toEqual([[2, -1]]);
  });

  it('rejects rows of different lengths', () => {
    expect(() => entropyShapedAdvantages([[1, 1]], [[0.1]], 0.3)).toThrow(RangeError);
  });
});
