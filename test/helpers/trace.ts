// Small helpers shared by the tracing and access-list tests: raw JSON-RPC that throws on
// an error, and waiting on conditions (pre-confirmed, sealed) rather than on time.

import { vi } from 'vitest';
import { rpc } from './node.js';

/** The result of a JSON-RPC call; an error response throws with its code and message. */
export async function call(url: string, method: string, params: unknown[] = []): Promise<any> {
  const r = await rpc(url, method, params);
  if (r.error) throw new Error(`${method}: ${r.error.code} ${r.error.message}`);
  return r.result;
}

/** Waits (vitest's vi.waitFor) until `f` returns something truthy. */
export const until = <T>(f: () => Promise<T | null | undefined | false>, timeoutMs = 10_000, what = 'condition'): Promise<T> =>
  vi.waitFor(
    async () => {
      const v = await f();
      if (!v) throw new Error(`timed out waiting for ${what}`);
      return v;
    },
    { timeout: timeoutMs, interval: 20 },
  );

/** The receipt, once the transaction's block is sealed (receipts wait for the seal). */
export const sealedReceipt = (url: string, hash: string): Promise<any> =>
  until(() => call(url, 'eth_getTransactionReceipt', [hash]), 20_000, `receipt of ${hash}`);

/** Resolves once the transaction is in the block being built. */
export const preconfirmed = (url: string, hash: string): Promise<unknown> =>
  until(async () => (await call(url, 'preconf_transactionStatus', [hash])).status === 'preconfirmed', 10_000, `pre-confirmation of ${hash}`);

/** Resolves right after a block is sealed: the next block is then as far from its seal as it gets. */
export async function freshBlock(url: string): Promise<void> {
  const start = await call(url, 'eth_blockNumber');
  await until(async () => (await call(url, 'eth_blockNumber')) !== start, 20_000, 'the next sealed block');
}
