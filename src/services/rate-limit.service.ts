import { Inject, Injectable } from '@nestjs/common';
import type { Response } from 'express';
import { APP_CONFIG, AppConfig } from '../config/config';
import { RateLimitRepository } from '../repositories/rate-limit.repository';
import { TooManyRequests } from './errors';

const WINDOW_MS = 60_000;

/**
 * Per-API-key request limit per minute, announced with the RateLimit header fields
 * (draft-ietf-httpapi-ratelimit-headers: RateLimit-Limit / -Remaining / -Reset and
 * RateLimit-Policy); over the limit, a 429 problem with Retry-After.
 */
@Injectable()
export class RateLimitService {
  constructor(
    private readonly counters: RateLimitRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async check(keyId: string, response: Response): Promise<void> {
    const limit = this.config.rateLimitPerMinute;
    if (limit === 0) return;
    const hit = await this.counters.hit(`key:${keyId}`, WINDOW_MS);
    if (!hit) return;
    const resetSeconds = Math.ceil(hit.resetMs / 1000);
    response.setHeader('RateLimit-Policy', `${limit};w=${WINDOW_MS / 1000}`);
    response.setHeader('RateLimit-Limit', String(limit));
    response.setHeader('RateLimit-Remaining', String(Math.max(0, limit - hit.count)));
    response.setHeader('RateLimit-Reset', String(resetSeconds));
    if (hit.count > limit) throw new TooManyRequests(`this API key made more than ${limit} requests in a minute; retry in ${resetSeconds} s`, resetSeconds);
  }
}
