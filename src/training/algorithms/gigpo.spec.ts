import { discountedStepReturns, gigpoAdvantages, gigpoStepAdvantages, type GigpoStep } from './gigpo';

describe('discountedStepReturns', () => {
  it('accumulates backwards with γ', () => {
    const returns = discountedStepReturns([-0.1, -0.1, 1], 0.95);
    expect(returns).toHaveLength(3);
    expect(returns[2]).toBeCloseTo(1, 12);
    expect(returns[1]).toBeCloseTo(-0.1 + 0.95 * 1, 12);
    expect(returns[0]).toBeCloseTo(-0.1 + 0.95 * (-0.1 + 0.95 * 1), 12);
  });
});

describe('gigpoStepAdvantages', () => {
  const step = (anchorKey: string, stepReturn: number): GigpoStep => ({ anchorKey, stepReturn });
  // Anchor s0 is shared by all three rollouts, s1 by two with different returns, s3 by two with
  // equal returns, s2 appears once.
  const group = [
    [step('s0', 0.9), step('s1', 1)],
    [step('s0', 0.1), step('s2', 0.7), step('s3', 0.2)],
    [step('s0', 0.5), step('s1', 0), step('s3', 0.2)],
  ];

  it('z-scores returns within each anchor-state group', () => {
    const adv = gigpoStepAdvantages(group);
    expect(adv.map((steps) => steps.length)).toEqual([2, 3, 3]);
    // s0: mean 0.5, unbiased std √((0.16 + 0.16 + 0) / 2) = 0.4
    expect(adv[0][0]).toBeCloseTo((0.9 - 0.5) / (0.4 + 1e-6), 10);
    expect(adv[1][0]).toBeCloseTo((0.1 - 0.5) / (0.4 + 1e-6), 10);
    expect(adv[2][0]).toBeCloseTo(0, 12);
    // s1: mean 0.5, unbiased std √((0.25 + 0.25) / 1)
    expect(adv[0][1]).toBeCloseTo((1 - 0.5) / (Math.sqrt(0.5) + 1e-6), 10);
    expect(adv[2][1]).toBeCloseTo((0 - 0.5) / (Math.sqrt(0.5) + 1e-6), 10);
    expect(adv[1][1]).toBe(0); // singleton s2
    expect(adv[1][2]).toBe(0); // s3: equal returns
    expect(adv[2][2]).toBe(0);
  });

  it('mean-centres without dividing in "mean" mode', () => {
    const adv = gigpoStepAdvantages(group, { normalization: 'mean' });
    expect(adv[0][0]).toBeCloseTo(0.9 - (0.9 + 0.1 + 0.5) / 3, 12);
    expect(adv[2][1]).toBeCloseTo(0 - (1 + 0) / 2, 12);
    expect(adv[1][1]).toBe(0);
  });
});

describe('gigpoAdvantages', () => {
  it('adds ω times the step advantage to the episode advantage', () => {
    const combined = gigpoAdvantages([1, -1], [[0.5, 0], [0.25]]);
    expect(combined).toEqual([[1 + 0.5, 1 + 0], [-1 + 0.25]]);
    const weighted = gigpoAdvantages([1, -1], [[0.5, 0], [0.25]], 0.5);
    expect(weighted[0][0]).toBeCloseTo(1 + 0.5 * 0.5, 12);
    expect(weighted[1][0]).toBeCloseTo(-1 + 0.5 * 0.25, 12);
  });

  it('rejects mismatched episode and step counts', () => {
    expect(() => gigpoAdvantages([1], [[0], [0]])).toThrow(RangeError);
  });
});
