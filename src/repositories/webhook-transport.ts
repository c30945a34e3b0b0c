import { Inject, Injectable, Optional } from '@nestjs/common';
import { lookup as systemLookup } from 'node:dns/promises';
import { request as httpRequest, RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, LookupFunction } from 'node:net';
import { APP_CONFIG, AppConfig } from '../config/config';
import { AddressPolicy } from './address-policy';

/** What an endpoint answered. */
export interface EndpointAnswer {
  status: number;
  /** 2xx. */
  ok: boolean;
}

/** Resolves a host name to every address it has (the system resolver by default). */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;
export const WEBHOOK_RESOLVER = Symbol('WEBHOOK_RESOLVER');

/** A webhook URL the address policy refuses (docs/security.md); nothing was sent. */
export class RefusedTarget extends Error {
  constructor(reason: string) {
    super(`refused: ${reason}`);
    this.name = 'RefusedTarget';
  }
}

const LOCALHOST = /^(.+\.)?localhost$/i;
const LOOPBACK = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
];

const resolveWithSystem: Resolver = (hostname) => systemLookup(hostname, { all: true, verbatim: true });

/**
 * The one owner of outbound HTTP: POSTs a webhook delivery to its endpoint.
 *
 * Before anything is sent the host is resolved and every address it has is checked against the
 * AddressPolicy; the connection then goes to the address that was checked (the lookup of the
 * request is pinned to it), so a name that resolves elsewhere a moment later (DNS rebinding)
 * changes nothing. Redirects are answers, not followed. No connection is reused between
 * deliveries. Rejects when no answer came (refused by the policy, DNS, connection, or no answer
 * within `timeoutMs`, which covers all of it); any status is an answer.
 */
@Injectable()
export class WebhookTransport {
  private readonly policy: AddressPolicy;
  private readonly resolve: Resolver;

  constructor(@Inject(APP_CONFIG) config: AppConfig, @Optional() @Inject(WEBHOOK_RESOLVER) resolve?: Resolver) {
    this.policy = new AddressPolicy(config.webhooks.allowedNetworks);
    this.resolve = resolve ?? resolveWithSystem;
  }

  async post(url: string, request: { headers: Record<string, string>; body: string; timeoutMs: number }): Promise<EndpointAnswer> {
    const signal = AbortSignal.timeout(request.timeoutMs);
    const target = new URL(url);
    const address = await within(this.checkedAddress(target), signal);
    return this.send(target, address, request, signal);
  }

  /**
   * Throws RefusedTarget when the URL's host is, or resolves to, an address the policy refuses;
   * a host that does not resolve now passes (each delivery checks again).
   */
  async check(url: string, timeoutMs: number): Promise<void> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      // The WHATWG parser refuses what no request could be sent to, IPv6 zones (`[fe80::1%25lo]`) among them.
      throw new RefusedTarget(`${url} is not a URL a request can be sent to`);
    }
    try {
      await within(this.checkedAddress(target), AbortSignal.timeout(timeoutMs));
    } catch (error) {
      if (error instanceof RefusedTarget) throw error;
    }
  }

  /** The address to connect to, once the host and everything it resolves to are allowed. */
  private async checkedAddress(target: URL): Promise<{ address: string; family: number }> {
    if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new RefusedTarget(`${target.protocol} is not http or https`);
    // A fully qualified name ends in a dot (`localhost.`): the same host as without it.
    const host = target.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.+$/, '');
    // RFC 6761: `localhost` and every name under it are loopback, whatever a resolver says.
    const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : LOCALHOST.test(host) ? LOOPBACK : await this.resolve(host);
    if (addresses.length === 0) throw new Error(`${host} has no address`);
    // Every address, not just the first: a name with one private address among public ones is refused.
    for (const { address } of addresses) {
      const refusal = this.policy.refusal(address);
      if (refusal !== null) throw new RefusedTarget(host === address ? refusal : `${host} resolves to ${refusal}`);
    }
    return addresses[0];
  }

  private send(target: URL, pinned: { address: string; family: number }, request: { headers: Record<string, string>; body: string }, signal: AbortSignal): Promise<EndpointAnswer> {
    const lookup: LookupFunction = (_hostname, options, callback) => {
      if (options.all) (callback as (error: null, addresses: { address: string; family: number }[]) => void)(null, [pinned]);
      else callback(null, pinned.address, pinned.family);
    };
    const options: RequestOptions = {
      method: 'POST',
      hostname: target.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: target.port || (target.protocol === 'https:' ? 443 : 80),
      path: `${target.pathname}${target.search}`,
      headers: { ...request.headers, host: target.host, 'content-length': String(Buffer.byteLength(request.body)) },
      lookup,
      agent: false,
      signal,
    };
    return new Promise((resolve, reject) => {
      const outgoing = (target.protocol === 'https:' ? httpsRequest : httpRequest)(options, (response) => {
        response.resume(); // the body is not read, only drained
        const status = response.statusCode ?? 0;
        resolve({ status, ok: status >= 200 && status < 300 });
      });
      outgoing.on('error', (error) => reject(signal.aborted ? new Error(`no answer within the timeout (${error.message})`) : error));
      outgoing.end(request.body);
    });
  }
}

/** `promise`, or a rejection once `signal` aborts. */
function within<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(new Error('no answer within the timeout (while resolving the host)'));
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}
