import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/config';
import { RateLimitRepository } from '../repositories/rate-limit.repository';

const WINDOW_MS = 60_000;

/** Where an API key stands in the current window (fixed windows of `windowSeconds`). */
export interface RateLimitStanding {
  limit: number;
  windowSeconds: number;
  /** Requests left in this window, this one counted (never negative). */
  remaining: number;
  /** Seconds until the window ends (rounded up). */
  resetSeconds: number;
  /** This request is over the limit. */
  exceeded: boolean;
}

/**
 * Per-API-key request limit per minute (STARLAB_RATE_LIMIT_PER_MINUTE; 0 = off). Counts one
 * request and says where the key stands; the API announces it in headers and refuses with a 429.
 */
@Injectable()
export class RateLimitService {
  constructor(
    private readonly counters: RateLimitRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Seconds until `address` may try API keys again: it made STARLAB_AUTH_FAILURES_PER_MINUTE
   * failed lookups in this window. Null when it may (or limits are off, or Redis cannot answer).
   */
  async lookupsRefused(address: string): Promise<number | null> {
    const limit = this.config.authFailuresPerMinute;
    if (limit === 0) return null;
    const window = await this.counters.count(`auth-failures:${address}`, WINDOW_MS);
    return window && window.count >= limit ? Math.ceil(window.resetMs / 1000) : null;
  }

  /** Counts a failed API key lookup of `address`. */
  async lookupFailed(address: string): Promise<void> {
    if (this.config.authFailuresPerMinute > 0) await this.counters.hit(`auth-failures:${address}`, WINDOW_MS);
  }

  /** null: no limit applies (limits off, or the counters cannot be reached: requests are not held back). */
  async hit(keyId: string): Promise<RateLimitStanding | null> {
    const limit = this.config.rateLimitPerMinute;
    if (limit === 0) return null;
    const hit = await this.counters.hit(`key:${keyId}`, WINDOW_MS);
    if (!hit) return null;
    return { limit, windowSeconds: WINDOW_MS / 1000, remaining: Math.max(0, limit - hit.count), resetSeconds: Math.ceil(hit.resetMs / 1000), exceeded: hit.count > limit };
  }
}
