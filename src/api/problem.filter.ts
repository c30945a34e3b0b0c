import { ArgumentsHost, BadRequestException, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import { SpecValidationError } from '../training/spec/errors';
import { DomainError, TooManyRequests } from '../services/errors';

/** RFC 9457 problem document. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
  [extension: string]: unknown;
}

const TYPE_BASE = 'https://starlab.dev/problems/';

/**
 * One problem type per kind of error, each with one title (RFC 9457: the title belongs to the
 * type), whoever raises it: a domain error, a bad spec, Nest's router (an unknown route is the
 * same `not-found` as an unknown job), body parsing.
 */
const BY_STATUS: Record<number, { type: string; title: string }> = {
  400: { type: 'invalid-request', title: 'Invalid request' },
  401: { type: 'unauthenticated', title: 'Unauthenticated' },
  403: { type: 'forbidden', title: 'Forbidden' },
  404: { type: 'not-found', title: 'Not found' },
  409: { type: 'conflict', title: 'Conflict' },
  413: { type: 'payload-too-large', title: 'Payload too large' },
  415: { type: 'unsupported-media-type', title: 'Unsupported media type' },
  422: { type: 'unprocessable-request', title: 'Unprocessable request' },
  429: { type: 'too-many-requests', title: 'Too many requests' },
};

/** body-parser failures arrive as errors with a `type` and a status. */
interface BodyParserError extends Error {
  type?: string;
  status?: number;
  limit?: number;
}

/**
 * The one place errors become HTTP: domain errors and spec errors keep their status and
 * fields, body-parser errors become 400/413/415, Nest's HTTP errors pass through, anything else
 * is a 500 with an error id in the log and no internals in the response.
 */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger(ProblemFilter.name);

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const response = http.getResponse<Response>();
    const request = http.getRequest<Request>();
    const problem = this.toProblem(exception, request);
    if (response.headersSent) {
      response.end();
      return;
    }
    if (exception instanceof TooManyRequests) response.setHeader('Retry-After', String(exception.retryAfterSeconds));
    response.status(problem.status).type('application/problem+json').send(JSON.stringify(problem));
  }

  private toProblem(exception: unknown, request: Request): Problem {
    const instance = request.originalUrl;
    if (exception instanceof SpecValidationError) {
      return { ...kind(400), status: 400, detail: exception.message, instance, errors: exception.errors };
    }
    if (exception instanceof DomainError) {
      return { type: `${TYPE_BASE}${slug(exception.title)}`, title: exception.title, status: exception.status, detail: exception.message, instance, ...exception.extensions };
    }
    const bodyError = exception as BodyParserError;
    // Nest turns body-parser's SyntaxError into a BadRequestException carrying its message.
    const nestWrappedSyntaxError = exception instanceof BadRequestException && /JSON/.test(exception.message);
    if (bodyError?.type === 'entity.parse.failed' || nestWrappedSyntaxError) {
      return { type: `${TYPE_BASE}malformed-json`, title: 'Malformed JSON', status: 400, detail: 'the request body is not valid JSON', instance };
    }
    if (bodyError?.type === 'entity.too.large') {
      return { ...kind(413), status: 413, detail: `the request body exceeds ${bodyError.limit} bytes`, instance };
    }
    if (bodyError?.type === 'encoding.unsupported' || bodyError?.type === 'charset.unsupported') {
      return { ...kind(415), status: 415, detail: bodyError.message, instance };
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const body = exception.getResponse();
      const detail = typeof body === 'string' ? body : ((body as { message?: unknown }).message as string | undefined) ?? exception.message;
      return { ...kind(status, exception.name), status, detail: String(detail), instance };
    }
    const errorId = randomUUID();
    this.logger.error(`unhandled error ${errorId} on ${request.method} ${instance}: ${(exception as Error)?.stack ?? exception}`);
    return { type: `${TYPE_BASE}internal`, title: 'Internal error', status: 500, detail: `an internal error occurred (error id ${errorId})`, instance, errorId };
  }
}

/** The type and title of a status; one Nest raises that no domain error has keeps its own name. */
function kind(status: number, name = `HTTP ${status}`): { type: string; title: string } {
  const known = BY_STATUS[status];
  if (known) return { type: `${TYPE_BASE}${known.type}`, title: known.title };
  return { type: `${TYPE_BASE}${slug(name)}`, title: name.replace(/Exception$/, '').replace(/([a-z])([A-Z])/g, '$1 $2') };
}

function slug(text: string): string {
  return text.toLowerCase().replace(/exception$/, '').replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}
