// Who a client is: the peer's address, or behind trusted reverse proxies (--trusted-proxies
// N) the address the outermost of them saw, taken from X-Forwarded-For. Each proxy appends
// the address it received the request from, so with N trusted proxies the client is the
// N-th entry from the right; entries further left were written by the client itself and
// are not believed.

import type { HttpResponse } from 'uWebSockets.js';

const decoder = new TextDecoder();

export function forwardedClient(forwarded: string, trustedProxies: number): string | undefined {
  if (trustedProxies <= 0 || forwarded === '') return undefined;
  const hops = forwarded.split(',');
  const entry = hops[Math.max(0, hops.length - trustedProxies)]?.trim();
  return entry === undefined || entry === '' ? undefined : entry;
}

/** `res` must still be open (not answered, not aborted). */
export function peerAddress(res: HttpResponse, forwarded: string, trustedProxies: number): string {
  return forwardedClient(forwarded, trustedProxies) ?? decoder.decode(res.getRemoteAddressAsText());
}
