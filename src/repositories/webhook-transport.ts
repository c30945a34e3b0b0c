import { Injectable } from '@nestjs/common';

/** What an endpoint answered. */
export interface EndpointAnswer {
  status: number;
  /** 2xx. */
  ok: boolean;
}

/**
 * The one owner of outbound HTTP: POSTs a webhook delivery to its endpoint. Rejects when no
 * answer came (refused, reset, DNS, or no answer within `timeoutMs`); any status is an answer.
 */
@Injectable()
export class WebhookTransport {
  async post(url: string, request: { headers: Record<string, string>; body: string; timeoutMs: number }): Promise<EndpointAnswer> {
    const response = await fetch(url, { method: 'POST', headers: request.headers, body: request.body, signal: AbortSignal.timeout(request.timeoutMs) });
    return { status: response.status, ok: response.ok };
  }
}
