/**
 * Domain errors: services throw these; one filter maps them to problem+json. Nothing else
 * in the code decides HTTP statuses.
 */
export interface FieldProblem {
  field: string;
  message: string;
}

export abstract class DomainError extends Error {
  abstract readonly status: number;
  abstract readonly title: string;
  /** Extra members for the problem document (e.g. `errors`). */
  readonly extensions: Record<string, unknown> = {};
}

export class ValidationFailed extends DomainError {
  readonly status = 400;
  readonly title = 'Invalid request';
  constructor(readonly errors: FieldProblem[], detail = errors.map((e) => `${e.field}: ${e.message}`).join('; ')) {
    super(detail);
    this.extensions.errors = errors;
  }
}

export class Unauthenticated extends DomainError {
  readonly status = 401;
  readonly title = 'Unauthenticated';
}

export class Forbidden extends DomainError {
  readonly status = 403;
  readonly title = 'Forbidden';
}

/** Also what another user's job looks like: its existence is not disclosed. */
export class NotFound extends DomainError {
  readonly status = 404;
  readonly title = 'Not found';
  constructor(what: string, id: string) {
    super(`${what} ${id} does not exist`);
  }
}

export class Conflict extends DomainError {
  readonly status = 409;
  readonly title = 'Conflict';
}

export class Unprocessable extends DomainError {
  readonly status = 422;
  readonly title = 'Unprocessable request';
}

export class TooManyRequests extends DomainError {
  readonly status = 429;
  readonly title: string = 'Too many requests';
  constructor(detail: string, readonly retryAfterSeconds: number) {
    super(detail);
  }
}

/** A per-user limit (queued jobs) rather than a request rate. */
export class QuotaExceeded extends TooManyRequests {
  override readonly title = 'Quota exceeded';
}
