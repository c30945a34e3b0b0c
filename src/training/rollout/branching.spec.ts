import { BranchParameters, branchScore, globalSampleCount, segmentEntropy, shouldBranch } from './branching';

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

describe('segmentEntropy', () => {
  it('sums the first ≤ 20 token entropies and divides by ln |V|', () => {
    const entropies = Array.from({ length: 25 }, (_, j) => 0.1 * (j + 1));
    // 0.1·(1 + 2 + … + 20) = 0.1·210 = 21, over ln 64.
    expect(segmentEntropy(entropies, 64, 20)).toBeCloseTo(21 / Math.log(64), 12);
    // A segment shorter than the window counts every token: 0.1 + 0.2 + 0.3 = 0.6.
    expect(segmentEntropy(entropies.slice(0, 3), 64, 20)).toBeCloseTo(0.6 / Math.log(64), 12);
    expect(segmentEntropy([], 64, 20)).toBe(0);
  });
});

describe('globalSampleCount (AEPO pre-monitoring)', () => {
  it.each([
    // k, H_root, H̄_tool, m = clamp(⌊k·σ(0.5·(H_root − H̄_tool))⌋ + 1, 1, k)
    [16, 0.3, 0.1, Math.floor(16 * sigmoid(0.5 * 0.2)) + 1], // ⌊16·0.52498⌋ + 1 = 8 + 1 = 9
    [16, 0, 2, Math.floor(16 * sigmoid(0.5 * -2)) + 1], // ⌊16·0.26894⌋ + 1 = 4 + 1 = 5
    [16, 10, 0, Math.floor(16 * sigmoid(0.5 * 10)) + 1], // ⌊16·0.99331⌋ + 1 = 15 + 1 = 16
    [4, 0.3, 0.7, Math.floor(4 * sigmoid(0.5 * -0.4)) + 1], // ⌊4·0.45017⌋ + 1 = 1 + 1 = 2
  ])('k = %i, H_root = %f, H̄_tool = %f gives m = %i', (k, root, tool, m) => {
    expect(globalSampleCount(k, root, tool)).toBe(m);
  });

  it('clamps to [1, k]', () => {
    // σ(50) rounds to 1: ⌊16·1⌋ + 1 = 17, clamped to 16.
    expect(globalSampleCount(16, 100, 0)).toBe(16);
    expect(globalSampleCount(1, -100, 0)).toBe(1);
    // σ(−50) ≈ 2e−22: ⌊16·σ⌋ + 1 = 1.
    expect(globalSampleCount(16, -100, 0)).toBe(1);
  });
});

describe('the branch decision', () => {
  const aepo: BranchParameters = { rule: 'aepo', threshold: 0.5, entropyWeight: 0.2, penalty: 0.05 };
  const arpo: BranchParameters = { ...aepo, rule: 'arpo' };

  it.each([
    // u, ΔH, l, p = clip((u + 0.2·ΔH)·max(0, 1 − 0.05·l), 0, 1), branch iff p ≥ 0.5
    [0.4, 0.6, 0, (0.4 + 0.2 * 0.6) * 1, true], // 0.52
    [0.4, 0.6, 1, (0.4 + 0.2 * 0.6) * (1 - 0.05), false], // 0.494: the penalty stops it
    [0.4, 0.6, 2, (0.4 + 0.2 * 0.6) * (1 - 0.1), false], // 0.468
    [0.45, 0.6, 1, (0.45 + 0.2 * 0.6) * (1 - 0.05), true], // 0.5415
    [0.55, -1, 0, 0.55 - 0.2, false], // 0.35: entropy fell
    [0.9, 1, 0, 1, true], // 1.1 clipped to 1
    [0.9, 1, 20, 0, false], // max(0, 1 − 1) = 0
    [0.9, 1, 30, 0, false], // the factor never goes negative
  ])('AEPO: u = %f, ΔH = %f, l = %i gives p = %f, branch %s', (u, entropyChange, consecutiveBranches, p, branches) => {
    const decision = { u, entropyChange, consecutiveBranches };
    expect(branchScore(decision, aepo)).toBeCloseTo(p, 12);
    expect(shouldBranch(decision, aepo)).toBe(branches);
  });

  it.each([
    // u, ΔH, l, p = clip(u − 0.2·ΔH, 0, 1), branch iff p ≤ 0.5 (ARPO's code: no penalty)
    [0.6, 0.6, 0, 0.6 - 0.2 * 0.6, true], // 0.48
    [0.6, 0.6, 10, 0.6 - 0.2 * 0.6, true], // l changes nothing
    [0.6, 0, 0, 0.6, false],
    [0.4, -1, 0, 0.4 + 0.2, false], // 0.6: entropy fell
    [0.1, 1, 0, 0, true], // −0.1 clipped to 0
  ])('ARPO: u = %f, ΔH = %f, l = %i gives p = %f, branch %s', (u, entropyChange, consecutiveBranches, p, branches) => {
    const decision = { u, entropyChange, consecutiveBranches };
    expect(branchScore(decision, arpo)).toBeCloseTo(p, 12);
    expect(shouldBranch(decision, arpo)).toBe(branches);
  });

  it('branches as often under both rules at τ = 0.5 without penalty: P = 0.5 + w·ΔH', () => {
    const share = (parameters: BranchParameters, entropyChange: number) => {
      let n = 0;
      for (let i = 0; i < 1000; i++) if (shouldBranch({ u: (i + 0.5) / 1000, entropyChange, consecutiveBranches: 0 }, parameters)) n++;
      return n / 1000;
    };
    expect(share(aepo, 1)).toBeCloseTo(0.5 + 0.2 * 1, 2);
    expect(share(arpo, 1)).toBeCloseTo(0.5 + 0.2 * 1, 2);
    expect(share(aepo, -1)).toBeCloseTo(0.5 - 0.2, 2);
  });
});
