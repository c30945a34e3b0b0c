import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/config';
import type { Principal } from './auth.service';

/** Enough for every key of a large lab; past it the oldest entry goes (it is looked up again). */
const MAX_ENTRIES = 10_000;

/**
 * API keys this replica resolved recently (by key hash), each trusted for
 * STARLAB_PRINCIPAL_CACHE_MS (default 5 s): without it every request would cost three queries
 * (key, user, team) before any work. The bound is what a change made through another replica
 * waits for: a key revoked, a user disabled or demoted, a team's sharing changed there is
 * honoured here at most that long later. A change made through this replica empties the cache
 * at once (the services that make them call `clear`), so a caller sees their own change on the
 * next request; and since `clear` starts a new generation, a lookup that began before it (and
 * may have read the key before it was revoked) is not kept when it ends. Failed lookups are not
 * kept: they are rate limited per client address instead (AuthService).
 */
@Injectable()
export class PrincipalCache {
  private readonly entries = new Map<string, { principal: Principal; until: number }>();
  private current = 0;

  constructor(@Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'principalCacheMs'>) {}

  /** Taken before a lookup and handed back to `set`: a `clear` in between voids the lookup's result. */
  get generation(): number {
    return this.current;
  }

  get(hash: string, now = Date.now()): Principal | null {
    const entry = this.entries.get(hash);
    if (!entry) return null;
    if (entry.until > now) return entry.principal;
    this.entries.delete(hash);
    return null;
  }

  /** Keeps what a lookup begun at `generation` resolved, unless the cache was cleared since. */
  set(hash: string, principal: Principal, generation: number, now = Date.now()): void {
    if (this.config.principalCacheMs === 0 || generation !== this.current) return;
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(hash, { principal, until: now + this.config.principalCacheMs });
  }

  /** Every entry, and every lookup in flight: called after any change to keys, users or teams (rare; the next lookups refill it). */
  clear(): void {
    this.entries.clear();
    this.current++;
  }
}
