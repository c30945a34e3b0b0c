import type { Principal } from './auth.service';
import { PrincipalCache } from './principal-cache';

const ann: Principal = { userId: 'u1', name: 'ann', role: 'member', teamId: null, teamSharesJobs: false, keyId: 'k1' };

describe('PrincipalCache', () => {
  it('trusts a resolved key for exactly STARLAB_PRINCIPAL_CACHE_MS, then forgets it', () => {
    const cache = new PrincipalCache({ principalCacheMs: 5000 });
    cache.set('hash', ann, 1000);
    expect(cache.get('hash', 1000)).toBe(ann);
    expect(cache.get('hash', 1000 + 4999)).toBe(ann);
    expect(cache.get('hash', 1000 + 5000)).toBeNull(); // the bound: a revocation elsewhere is honoured from here on
    expect(cache.get('hash', 1000)).toBeNull(); // and it was dropped, not kept for later
  });

  it('keeps nothing when the bound is 0, and nothing after clear()', () => {
    const off = new PrincipalCache({ principalCacheMs: 0 });
    off.set('hash', ann, 0);
    expect(off.get('hash', 0)).toBeNull();
    const cache = new PrincipalCache({ principalCacheMs: 5000 });
    cache.set('a', ann, 0);
    cache.set('b', ann, 0);
    cache.clear();
    expect([cache.get('a', 1), cache.get('b', 1)]).toEqual([null, null]);
  });
});
