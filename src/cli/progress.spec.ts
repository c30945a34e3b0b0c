import { PassThrough } from 'node:stream';
import { ProgressBar, evalSuccess, progressSignals, renderProgress } from './progress';

const metrics = { 'reward/mean': 0.8125, 'success/rate': 0.75, 'reward/std_in_group': 0.3333, 'entropy/mean': 1.2345, 'grad_norm/actor': 0.0421, 'format/valid_rate': 1 };
const state = { step: 1234, total: 5000, signals: progressSignals(metrics, 0.6875), elapsedS: 3725, etaS: 11_400 };

describe('renderProgress', () => {
  it('fits every terminal width from 12 to 240 columns, never using the last column', () => {
    for (let columns = 12; columns <= 240; columns++) {
      const line = renderProgress(state, columns);
      expect([columns, line.length < columns]).toEqual([columns, true]);
      expect(line).toContain('1234/5000');
    }
  });

  it('keeps the bar, counter, timing and the first signals on 80 columns, everything on a wide terminal', () => {
    const line80 = renderProgress(state, 80);
    expect(line80).toMatch(/^\[#+\.+\] 1234\/5000 {2}reward 0\.813 {2}success 0\.750/);
    expect(line80).toMatch(/1h02m eta 3h10m$/);
    const wide = renderProgress(state, 200);
    for (const part of ['reward 0.813', 'success 0.750', 'eval 0.688', 'std 0.333', 'H 1.234', '|g| 0.042', 'fmt 1.000']) expect(wide).toContain(part);
    // The bar has its full width of 24 cells; 1234/5000 of them rounds to 6 filled.
    expect(wide.startsWith(`[${'#'.repeat(6)}${'.'.repeat(18)}]`)).toBe(true);
  });

  it('drops the least important signals first', () => {
    const line = renderProgress(state, 70);
    expect(line).toContain('reward');
    expect(line).not.toContain('fmt');
  });
});

describe('ProgressBar', () => {
  it('redraws in place within the stream’s width on a terminal', () => {
    const out = Object.assign(new PassThrough(), { isTTY: true, columns: 60 }) as unknown as NodeJS.WriteStream;
    let written = '';
    (out as unknown as PassThrough).on('data', (chunk) => (written += chunk));
    const bar = new ProgressBar(100, out);
    bar.update(1, metrics);
    bar.update(2, metrics);
    const lines = written.split('\r\x1b[2K').filter(Boolean);
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line.length).toBeLessThan(60);
  });

  it('picks up an evaluation success series whatever its protocol name', () => {
    expect(evalSuccess({ 'eval/greedy/success': 0.5, 'eval/sampled/success': 0.25 })).toBe(0.25);
    expect(evalSuccess({ 'eval/greedy/success': 0.5 })).toBe(0.5);
    expect(evalSuccess({ 'eval/success': 0.125 })).toBe(0.125);
    expect(evalSuccess({ 'eval/holdout-arms/success': 0.375 })).toBe(0.375);
    expect(evalSuccess({ 'reward/mean': 1 })).toBeUndefined();
  });
});
