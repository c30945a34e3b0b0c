import { mean, unbiasedStd, whiten } from './stats';

describe('mean', () => {
  it('averages and is NaN for no values', () => {
    expect(mean([1, 2, 6])).toBeCloseTo((1 + 2 + 6) / 3, 12);
    expect(mean([])).toBeNaN();
  });
});

describe('unbiasedStd', () => {
  it('divides by n − 1 like torch.std', () => {
    // mean 3, squared deviations 1 + 1 + 4 + 4 = 10
    expect(unbiasedStd([2, 4, 1, 5])).toBeCloseTo(Math.sqrt(10 / 3), 12);
  });

  it('is 0 for fewer than two values', () => {
    expect(unbiasedStd([])).toBe(0);
    expect(unbiasedStd([7])).toBe(0);
  });
});

describe('whiten', () => {
  it('centres and scales by the unbiased std, as veRL masked_whiten', () => {
    const whitened = whiten([1, 2, 3, 4]);
    expect(whitened).toHaveLength(4);
    // mean 2.5, unbiased variance (2.25 + 0.25 + 0.25 + 2.25) / 3 = 5/3
    const scale = 1 / Math.sqrt(5 / 3 + 1e-8);
    expect(whitened[0]).toBeCloseTo((1 - 2.5) * scale, 10);
    expect(whitened[1]).toBeCloseTo((2 - 2.5) * scale, 10);
    expect(whitened[3]).toBeCloseTo((4 - 2.5) * scale, 10);
    expect(mean(whitened)).toBeCloseTo(0, 12);
    expect(unbiasedStd(whitened)).toBeCloseTo(1, 6);
  });

  it('keeps the mean when shiftMean is false', () => {
    const whitened = whiten([1, 2, 3, 4], false);
    expect(whitened[0]).toBeCloseTo((1 - 2.5) / Math.sqrt(5 / 3 + 1e-8) + 2.5, 10);
  });

  it('maps a constant batch to zeros and an empty one to []', () => {
    expect(whiten([0.3, 0.3, 0.3])).toEqual([0, 0, 0]);
    expect(whiten([])).toEqual([]);
  });
});
