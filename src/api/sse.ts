import type { Request, Response } from 'express';
import type { JobEventView } from '../contracts/jobs.dto';

const HEARTBEAT_MS = 15_000;

/**
 * Writes events as text/event-stream (`id:` is the event id, so a client reconnecting with
 * Last-Event-ID continues without gaps) with comment heartbeats, and stops when the client
 * goes away or the source ends.
 */
export async function writeEventStream(req: Request, res: Response, source: (signal: AbortSignal) => AsyncIterable<JobEventView>): Promise<void> {
  const abort = new AbortController();
  req.on('close', () => abort.abort());
  res.status(200).set({ 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
  res.flushHeaders();
  res.write('retry: 2000\n\n');
  const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
  try {
    for await (const event of source(abort.signal)) {
      if (abort.signal.aborted) break;
      res.write(`id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    }
  } finally {
    clearInterval(heartbeat);
    res.end();
  }
}
