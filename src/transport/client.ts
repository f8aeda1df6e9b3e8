// Who a client is: the peer's address, or behind trusted reverse proxies (--trusted-proxies
// N) the address the outermost of them saw, taken from X-Forwarded-For. Each proxy appends
// the address it received the request from, so with N trusted proxies the client is the
// N-th entry from the right; entries further left were written by the client itself and
// are not believed.

import type { HttpResponse } from 'uWebSockets.js';
import { clientKey, clientKeyOfAscii } from '../limits/rate.js';
import type { Caller } from '../protocol/jsonrpc.js';

export function forwardedClient(forwarded: string, trustedProxies: number): string | undefined {
  if (trustedProxies <= 0 || forwarded === '') return undefined;
  const hops = forwarded.split(',');
  const entry = hops[Math.max(0, hops.length - trustedProxies)]?.trim();
  return entry === undefined || entry === '' ? undefined : entry;
}

/** An HTTP request's sender. `key` must be called while `res` is open (not answered, not
 *  aborted): the dispatcher asks before it answers, or never. */
export class HttpCaller implements Caller {
  constructor(
    private readonly res: HttpResponse,
    private readonly forwarded: string,
    private readonly trustedProxies: number,
  ) {}

  key(): number {
    const client = this.trustedProxies > 0 ? forwardedClient(this.forwarded, this.trustedProxies) : undefined;
    // The peer's address is ASCII: its key is taken from the bytes, as from the text.
    return client === undefined ? clientKeyOfAscii(new Uint8Array(this.res.getRemoteAddressAsText())) : clientKey(client);
  }
}
