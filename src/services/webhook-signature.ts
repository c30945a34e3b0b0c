import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new secret in the Standard Webhooks format: whsec_ + base64 of 24 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/**
 * Standard Webhooks (standardwebhooks.com) signature: base64 HMAC-SHA256, keyed with the
 * base64-decoded secret, over `${id}.${timestamp}.${body}`; sent as `webhook-signature: v1,<sig>`.
 */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** What a receiver does: recompute and compare in constant time (any of several v1 signatures). */
export function verifyWebhook(secret: string, headers: { id: string; timestamp: string; signature: string }, body: string): boolean {
  const expected = Buffer.from(signWebhook(secret, headers.id, Number(headers.timestamp), body));
  return headers.signature.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
