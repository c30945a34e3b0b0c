/**
 * Retries a write while the database is briefly unreachable (docs/failure-behaviour.md), with
 * capped exponential backoff. Gives up after `deadlineMs`, or at once if `abandon()` becomes true.
 */
export async function withRetry<T>(
  operation: () => Promise<T>,
  options: { deadlineMs: number; onRetry?: (error: Error, attempt: number) => void; abandon?: () => boolean },
): Promise<T> {
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      if (!isTransient(error) || Date.now() - started > options.deadlineMs || options.abandon?.()) throw error;
      options.onRetry?.(error as Error, attempt);
      await new Promise((resolve) => setTimeout(resolve, Math.min(100 * 2 ** attempt, 5000)));
    }
  }
}

/** Connection-level failures (server down, restarting, network), not constraint or data errors. */
export function isTransient(error: unknown): boolean {
  // Errors that leave Prisma's driver adapter unwrapped (e.g. from COMMIT in a transaction) are
  // DriverAdapterErrors: the kind, and for Postgres errors the SQLSTATE, are in `cause`.
  // A raw query's failure (P2010) carries the adapter's error, SQLSTATE included, in `meta`.
  type Cause = { kind?: unknown; code?: unknown; originalCode?: unknown };
  const cause = (error as { cause?: Cause })?.cause ?? (error as { meta?: { driverAdapterError?: { cause?: Cause } } })?.meta?.driverAdapterError?.cause;
  const codes = [(error as { code?: unknown })?.code, cause?.code, cause?.originalCode];
  const message = String((error as Error)?.message ?? '');
  return (
    codes.some((code) => typeof code === 'string' && TRANSIENT_CODES.has(code)) ||
    (typeof cause?.kind === 'string' && TRANSIENT_ADAPTER_KINDS.has(cause.kind)) ||
    /ECONNREFUSED|ECONNRESET|Connection terminated|terminating connection|the database system is (starting up|shutting down|not yet accepting connections)|Can't reach database|Timed out fetching a new connection|connection is closed|connection error and is not queryable/i.test(message)
  );
}

const TRANSIENT_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08006', 'P1001', 'P1002', 'P1017', 'P2024']);
const TRANSIENT_ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout']);
