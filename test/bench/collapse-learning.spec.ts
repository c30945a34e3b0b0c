import { healthyLearningRun } from '../../bench/collapse-learning';

describe('bench/collapse on stored learning runs', () => {
  it('calls a run healthy when its evaluation never halves and ends within 5 points of its start', () => {
    expect(healthyLearningRun({ 0: 0.2, 10: 0.15, 20: 0.25, 100: 0.3 })).toBe(true);
    expect(healthyLearningRun({ 0: 0.2, 10: 0.1, 100: 0.3 })).toBe(true); // exactly half is no fall below it
    expect(healthyLearningRun({ 0: 0.23, 20: 0.04, 100: 0.23 })).toBe(false); // a dip that recovered
    expect(healthyLearningRun({ 0: 0.25, 50: 0.2, 100: 0.19 })).toBe(false); // ended 6 points lower
  });
});
