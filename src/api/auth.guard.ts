import { CanActivate, ExecutionContext, Injectable, SetMetadata, createParamDecorator } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { AuthService, Principal } from '../services/auth.service';
import { TooManyRequests } from '../services/errors';
import { RateLimitService, RateLimitStanding } from '../services/rate-limit.service';

const PUBLIC = 'starlab:public';
/** Operations endpoints that need no API key (health, readiness, docs, Prometheus). */
export const Public = () => SetMetadata(PUBLIC, true);

type AuthenticatedRequest = Request & { principal?: Principal };

/**
 * Every route needs a valid API key unless marked @Public(); each key is rate-limited, announced
 * with the RateLimit header fields (draft-ietf-httpapi-ratelimit-headers: RateLimit-Limit /
 * -Remaining / -Reset and RateLimit-Policy); over the limit, a 429 problem with Retry-After.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly auth: AuthService,
    private readonly rateLimit: RateLimitService,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC, [context.getHandler(), context.getClass()])) return true;
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    request.principal = await this.auth.authenticate(request.headers.authorization, request.ip ?? request.socket.remoteAddress ?? 'unknown');
    const standing = await this.rateLimit.hit(request.principal.keyId);
    if (standing) announce(context.switchToHttp().getResponse<Response>(), standing);
    if (standing?.exceeded) throw new TooManyRequests(`this API key made more than ${standing.limit} requests in a minute; retry in ${standing.resetSeconds} s`, standing.resetSeconds);
    return true;
  }
}

function announce(response: Response, standing: RateLimitStanding): void {
  response.setHeader('RateLimit-Policy', `${standing.limit};w=${standing.windowSeconds}`);
  response.setHeader('RateLimit-Limit', String(standing.limit));
  response.setHeader('RateLimit-Remaining', String(standing.remaining));
  response.setHeader('RateLimit-Reset', String(standing.resetSeconds));
}

/** The authenticated caller of the current request. */
export const Caller = createParamDecorator((_: unknown, context: ExecutionContext): Principal => {
  return context.switchToHttp().getRequest<AuthenticatedRequest>().principal!;
});
