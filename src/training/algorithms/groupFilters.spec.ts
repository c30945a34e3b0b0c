import { dynamicSamplingKeep, passAtK, sampleWithDynamicSampling, selectGroupsByRewardStd } from './groupFilters';

describe('selectGroupsByRewardStd (StarPO-S)', () => {
  // in-group unbiased std: 0, √0.5, √2, 0, √0.5, √0.125, √2, 0
  const groups = [[0, 0], [0, 1], [0, 2], [1, 1], [1, 0], [0, 0.5], [2, 0], [3, 3]];

  it('keeps the top 25% by in-group std, ascending indices', () => {
    expect(selectGroupsByRewardStd(groups, 0.25, 1)).toEqual([2, 6]);
  });

  it('breaks ties by the lower group index', () => {
    // ⌈0.375 · 8⌉ = 3: groups 2 and 6 (√2), then 1 before 4 (both √0.5)
    expect(selectGroupsByRewardStd(groups, 0.375, 1)).toEqual([1, 2, 6]);
  });

  it('keeps at least minGroups, capped at the number of groups', () => {
    expect(selectGroupsByRewardStd(groups, 0.25, 4)).toEqual([1, 2, 4, 6]);
    expect(selectGroupsByRewardStd(groups, 0.25, 20)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('rounds the kept count up without floating-point overshoot', () => {
    const ten = Array.from({ length: 10 }, (_, i) => [0, i]);
    expect(selectGroupsByRewardStd(ten, 0.3, 1)).toEqual([7, 8, 9]); // 0.3 · 10 → 3, not 4
    expect(selectGroupsByRewardStd(ten, 0.25, 1)).toEqual([7, 8, 9]); // ⌈2.5⌉ = 3
  });

  it('rejects a fraction outside [0, 1]', () => {
    expect(() => selectGroupsByRewardStd(groups, 1.5, 1)).toThrow(RangeError);
  });
});

describe('dynamicSamplingKeep (DAPO)', () => {
  it('keeps only groups whose returns differ', () => {
    expect(dynamicSamplingKeep([[1, 1], [0, 1], [5], [0.2, 0.2, 0.2], [0, 0, 1]])).toEqual([1, 4]);
  });
});

describe('sampleWithDynamicSampling (DAPO)', () => {
  // Batches of two groups each, drawn in this order; [1, 1] and [0, 0] carry no signal.
  const batches = [
    [[1, 1], [0, 1]],
    [[0, 0], [0, 0]],
    [[1, 0], [1, 0]],
    [[0, 1], [0, 0]],
  ];
  const drawer = () => {
    let next = 0;
    return () => batches[next++];
  };

  it('draws batches until enough groups differ, and keeps the first ones in drawing order', async () => {
    // After batch 1: group 1 only; after 2: still 1; after 3: groups 1, 4, 5 → keep [1, 4].
    const sample = await sampleWithDynamicSampling(drawer(), (g) => g, 2, 10);
    expect(sample.batches).toBe(3);
    expect(sample.groups).toHaveLength(3 * 2);
    expect(sample.kept).toEqual([1, 4]);
  });

  it('stops at the bound and keeps what it has', async () => {
    const sample = await sampleWithDynamicSampling(drawer(), (g) => g, 2, 2);
    expect(sample.batches).toBe(2);
    expect(sample.kept).toEqual([1]);
  });

  it('draws one batch when it is already full of signal', async () => {
    expect(await sampleWithDynamicSampling(() => [[0, 1]], (g) => g, 1, 10)).toEqual({ groups: [[0, 1]], kept: [0], batches: 1 });
  });
});

describe('passAtK', () => {
  it('is the share of groups with at least one success', () => {
    expect(passAtK([[false, false], [true, false], [false, true], [false, false]])).toBeCloseTo(2 / 4, 12);
    expect(passAtK([])).toBe(0);
  });
});
