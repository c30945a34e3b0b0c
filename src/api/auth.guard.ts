import { CanActivate, ExecutionContext, Injectable, SetMetadata, createParamDecorator } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { AuthService, Principal } from '../services/auth.service';
import { RateLimitService } from '../services/rate-limit.service';

const PUBLIC = 'starlab:public';
/** Operations endpoints that need no API key (health, readiness, docs, Prometheus). */
export const Public = () => SetMetadata(PUBLIC, true);

type AuthenticatedRequest = Request & { principal?: Principal };

/** Every route needs a valid API key unless marked @Public(); each key is rate-limited. */
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
    request.principal = await this.auth.authenticate(request.headers.authorization);
    await this.rateLimit.check(request.principal.keyId, context.switchToHttp().getResponse<Response>());
    return true;
  }
}

/** The authenticated caller of the current request. */
export const Caller = createParamDecorator((_: unknown, context: ExecutionContext): Principal => {
  return context.switchToHttp().getRequest<AuthenticatedRequest>().principal!;
});
