import type { UserRepository } from '../repositories/user.repository';
import { AuthService } from './auth.service';
import { TooManyRequests, Unauthenticated } from './errors';
import { PrincipalCache } from './principal-cache';
import type { RateLimitService } from './rate-limit.service';

const row = { id: 'k1', prefix: 'sl_abc', lastUsedAt: new Date(), user: { id: 'u1', name: 'ann', role: 'member', teamId: null, team: null, disabledAt: null } };

/** AuthService with its repository and limiter mocked: what it keeps, and whom it refuses before asking Postgres. */
describe('AuthService', () => {
  function service(findActiveKey: () => Promise<unknown>, refusedFor: number | null = null) {
    const cache = new PrincipalCache({ principalCacheMs: 5000 });
    const users = { findActiveKey: jest.fn(findActiveKey), touchKey: jest.fn(async () => undefined) } as unknown as UserRepository;
    const limits = { lookupsRefused: jest.fn(async () => refusedFor), lookupFailed: jest.fn(async () => undefined) };
    return { auth: new AuthService(users, cache, limits as unknown as RateLimitService), cache, users, limits };
  }

  it('does not re-admit a key revoked through this replica while its lookup ran', async () => {
    let answer: (value: unknown) => void = () => undefined;
    const { auth, cache, users } = service(() => new Promise((resolve) => (answer = resolve)));
    const lookup = auth.authenticate('Bearer sl_key', '10.0.0.1');
    await new Promise((resolve) => setImmediate(resolve));
    cache.clear(); // ApiKeyService.revoke, after the revocation was stored
    answer(row); // the lookup read the key before the revocation
    await expect(lookup).resolves.toMatchObject({ keyId: 'k1' }); // this request began before it
    // The next request asks Postgres again, which no longer has the key: refused.
    (users.findActiveKey as jest.Mock).mockResolvedValueOnce(null);
    await expect(auth.authenticate('Bearer sl_key', '10.0.0.1')).rejects.toBeInstanceOf(Unauthenticated);
    expect(users.findActiveKey).toHaveBeenCalledTimes(2);
  });

  it('counts a failed lookup against the client address, and refuses an address over its limit before any query', async () => {
    const { auth, users, limits } = service(async () => null);
    await expect(auth.authenticate('Bearer sl_bogus', '10.0.0.2')).rejects.toBeInstanceOf(Unauthenticated);
    expect(limits.lookupFailed).toHaveBeenCalledWith('10.0.0.2');
    const blocked = service(async () => row, 42);
    const refused = blocked.auth.authenticate('Bearer sl_any', '10.0.0.2');
    await expect(refused).rejects.toBeInstanceOf(TooManyRequests);
    await expect(refused).rejects.toMatchObject({ retryAfterSeconds: 42 });
    expect(blocked.users.findActiveKey).not.toHaveBeenCalled();
    expect(users.findActiveKey).toHaveBeenCalledTimes(1);
  });

  it('checks a key against Postgres, not the cache, for an open stream', async () => {
    const { auth, users } = service(async () => row);
    await auth.authenticate('Bearer sl_key', '10.0.0.3');
    (users.findActiveKey as jest.Mock).mockResolvedValueOnce(null);
    expect(await auth.current('Bearer sl_key')).toBeNull();
  });
});
