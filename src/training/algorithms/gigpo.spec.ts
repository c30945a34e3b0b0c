import { discountedStepReturns, gigpoAdvantages, gigpoStepAdvantages, gigpoTurnAdvantages, type GigpoStep } from './gigpo';

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

describe('gigpoTurnAdvantages', () => {
  // Two rollouts from state A. Rollout 0: A → (−0.1) → B → (+1), return 0.9. Rollout 1: A → (−0.1)
  // → C → (−0.1), return −0.2. With γ = 0.5 the step returns are
  //   rollout 0: [−0.1 + 0.5·1, 1] = [0.4, 1];  rollout 1: [−0.1 + 0.5·(−0.1), −0.1] = [−0.15, −0.1].
  // Episode: mean 0.35, unbiased std √((0.55² + 0.55²) / 1) = 0.55·√2, so A^E = ±1/√2 (eps aside).
  // Anchor A holds 0.4 and −0.15: mean 0.125, std 0.275·√2, A^S = ±1/√2; B and C are singletons: 0.
  const episodes = [
    { return: 0.9, steps: [{ anchorKey: 'A', reward: -0.1 }, { anchorKey: 'B', reward: 1 }] },
    { return: -0.2, steps: [{ anchorKey: 'A', reward: -0.1 }, { anchorKey: 'C', reward: -0.1 }] },
  ];

  it('adds ω times the anchor-group step advantage to the episode advantage of each turn', () => {
    const adv = gigpoTurnAdvantages(episodes, { omega: 0.5, gamma: 0.5, normalization: 'mean-std', eps: 0 });
    const half = 1 / Math.SQRT2;
    expect(adv[0][0]).toBeCloseTo(half + 0.5 * half, 10);
    expect(adv[0][1]).toBeCloseTo(half + 0.5 * 0, 10);
    expect(adv[1][0]).toBeCloseTo(-half + 0.5 * -half, 10);
    expect(adv[1][1]).toBeCloseTo(-half, 10);
  });

  it("only centres both levels in 'mean' mode", () => {
    const adv = gigpoTurnAdvantages(episodes, { omega: 1, gamma: 0.5, normalization: 'mean' });
    expect(adv[0][0]).toBeCloseTo(0.55 + (0.4 - 0.125), 10);
    expect(adv[1][1]).toBeCloseTo(-0.55 + 0, 10);
  });

  it('gives a group whose returns are all equal only its step advantages', () => {
    const tied = [
      { return: 1, steps: [{ anchorKey: 'A', reward: 0 }, { anchorKey: 'B', reward: 1 }] },
      { return: 1, steps: [{ anchorKey: 'A', reward: 1 }] },
    ];
    // Anchor A: step returns 0 + 0.5·1 = 0.5 and 1, mean 0.75, A^S = ∓0.25.
    const adv = gigpoTurnAdvantages(tied, { omega: 1, gamma: 0.5, normalization: 'mean' });
    expect(adv).toEqual([[-0.25, 0], [0.25]]);
  });
});
