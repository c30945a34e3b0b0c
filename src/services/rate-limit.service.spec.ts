import type { AppConfig } from '../config/config';
import type { RateLimitRepository } from '../repositories/rate-limit.repository';
import { RateLimitService } from './rate-limit.service';

/** The counters are Redis's; here a stub answers what the repository would, one hit at a time. */
function service(limit: number, answers: ({ count: number; resetMs: number } | null)[]) {
  const keys: string[] = [];
  const counters = {
    hit: async (subject: string, windowMs: number) => {
      keys.push(`${subject}/${windowMs}`);
      return answers.shift() ?? null;
    },
  } as unknown as RateLimitRepository;
  return { limiter: new RateLimitService(counters, { rateLimitPerMinute: limit } as AppConfig), keys };
}

describe('RateLimitService', () => {
  it('counts per key in one-minute windows and says what is left and when the window ends', async () => {
    const { limiter, keys } = service(5, [{ count: 1, resetMs: 59_001 }, { count: 5, resetMs: 1_500 }]);
    expect(await limiter.hit('k1')).toEqual({ limit: 5, windowSeconds: 60, remaining: 5 - 1, resetSeconds: 60, exceeded: false });
    // The fifth request spends the last unit: allowed, with nothing left; 1.5 s rounds up to 2.
    expect(await limiter.hit('k1')).toEqual({ limit: 5, windowSeconds: 60, remaining: 5 - 5, resetSeconds: 2, exceeded: false });
    expect(keys).toEqual(['key:k1/60000', 'key:k1/60000']);
  });

  it('marks the request past the limit as exceeded, with remaining at 0, not below', async () => {
    const { limiter } = service(5, [{ count: 7, resetMs: 30_000 }]);
    expect(await limiter.hit('k1')).toEqual({ limit: 5, windowSeconds: 60, remaining: 0, resetSeconds: 30, exceeded: true });
  });

  it('applies no limit when it is 0, and none while the counters cannot answer', async () => {
    const off = service(0, [{ count: 99, resetMs: 1 }]);
    expect(await off.limiter.hit('k1')).toBeNull();
    expect(off.keys).toEqual([]);
    expect(await service(5, [null]).limiter.hit('k1')).toBeNull();
  });
});
