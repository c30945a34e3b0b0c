import type { Principal } from './auth.service';
import { PrincipalCache } from './principal-cache';

const ann: Principal = { userId: 'u1', name: 'ann', role: 'member', teamId: null, teamSharesJobs: false, keyId: 'k1' };

describe('PrincipalCache', () => {
  it('trusts a resolved key for exactly STARLAB_PRINCIPAL_CACHE_MS, then forgets it', () => {
    const cache = new PrincipalCache({ principalCacheMs: 5000 });
    cache.set('hash', ann, cache.generation, 1000);
    expect(cache.get('hash', 1000)).toBe(ann);
    expect(cache.get('hash', 1000 + 4999)).toBe(ann);
    expect(cache.get('hash', 1000 + 5000)).toBeNull(); // the bound: a revocation elsewhere is honoured from here on
    expect(cache.get('hash', 1000)).toBeNull(); // and it was dropped, not kept for later
  });

  it('keeps nothing when the bound is 0, and nothing after clear()', () => {
    const off = new PrincipalCache({ principalCacheMs: 0 });
    off.set('hash', ann, off.generation, 0);
    expect(off.get('hash', 0)).toBeNull();
    const cache = new PrincipalCache({ principalCacheMs: 5000 });
    cache.set('a', ann, cache.generation, 0);
    cache.set('b', ann, cache.generation, 0);
    cache.clear();
    expect([cache.get('a', 1), cache.get('b', 1)]).toEqual([null, null]);
  });

  it('does not keep what a lookup read when a revocation through this replica cleared the cache while it ran', () => {
    const cache = new PrincipalCache({ principalCacheMs: 5000 });
    const lookupBegan = cache.generation;
    cache.clear(); // the key is revoked meanwhile
    cache.set('hash', ann, lookupBegan, 0); // the lookup ends with the key as it was before
    expect(cache.get('hash', 1)).toBeNull();
    cache.set('hash', ann, cache.generation, 0); // a lookup begun after the change is kept
    expect(cache.get('hash', 1)).toBe(ann);
  });
});
