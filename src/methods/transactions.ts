// Submitting transactions, and following them.

import { RpcError } from '../errors/index.js';
import { callObject } from '../validation/call.js';
import { argPath, fail, hash32, hexBytes, quantity, toBigInt } from '../validation/primitives.js';
import type { MethodOptions, MethodTable } from './index.js';

/** eth_sendRawTransactionSync waits this long by default, and at most this long. */
export const SYNC_DEFAULT_TIMEOUT_MS = 5_000;
export const SYNC_MAX_TIMEOUT_MS = 60_000;
/** EIP-7966: the transaction is in the pool but did not land in time; `data` is its hash. */
export const SYNC_TIMEOUT_CODE = 4;

/** Milliseconds, as a JSON number or a hex quantity. Compared before any conversion: a
 *  huge hex value must be refused, not rounded into a plausible number. */
export function syncTimeout(v: unknown): number {
  if (v === undefined || v === null) return SYNC_DEFAULT_TIMEOUT_MS;
  const notPositive = () => fail(argPath(1), 'timeout must be a positive number of milliseconds');
  const tooLong = () => fail(argPath(1), `timeout above the maximum of ${SYNC_MAX_TIMEOUT_MS} ms`);
  if (typeof v === 'number') {
    if (!Number.isInteger(v) || v <= 0) throw notPositive();
    if (v > SYNC_MAX_TIMEOUT_MS) throw tooLong();
    return v;
  }
  const ms = toBigInt(quantity(v, argPath(1), 'timeout'));
  if (ms === 0n) throw notPositive();
  if (ms > BigInt(SYNC_MAX_TIMEOUT_MS)) throw tooLong();
  return Number(ms);
}

/** EIP-7966's timeout: the transaction was taken but did not land in time. */
export function syncTimedOut(timeoutMs: number, hash: string): RpcError {
  return new RpcError(
    SYNC_TIMEOUT_CODE,
    `the transaction was added to the pool but was not pre-confirmed within ${timeoutMs} ms; poll eth_getTransactionReceipt with the hash in data`,
    hash,
  );
}

export function transactionMethods({ chain, hub }: MethodOptions): MethodTable {
  return {
    eth_sendRawTransaction: {
      maxParams: 1,
      handler: (p) => chain.sendRawTransaction(hexBytes(p[0], argPath(0), 'raw transaction')),
    },
    // Signs with a dev account's key (embedded dev chain only): nonce, gas and fees filled in.
    eth_sendTransaction: {
      maxParams: 1,
      handler: (p) => chain.sendTransaction(callObject(p[0], argPath(0))),
    },
    // EIP-7966: submit, then answer with the receipt once the transaction is pre-confirmed.
    eth_sendRawTransactionSync: {
      maxParams: 2,
      handler: async (p) => {
        const raw = hexBytes(p[0], argPath(0), 'raw transaction');
        const timeout = syncTimeout(p[1]);
        const hash = JSON.parse(await chain.sendRawTransaction(raw)) as string;
        // Register, then look: both on this tick, so no pre-confirmation falls in between.
        const landed = hub.waitForTx(hash, timeout);
        const receipt = chain.getPreconfirmedReceipt(hash);
        if (receipt !== 'null') return receipt;
        if (await landed) return chain.getPreconfirmedReceipt(hash);
        throw syncTimedOut(timeout, hash);
      },
    },
    // Where a transaction stands: pending | queued | preconfirmed | included | dropped (with
    // the reason) | unknown. Never reports a dropped transaction as pending.
    preconf_transactionStatus: {
      maxParams: 1,
      handler: (p) => chain.txStatus(hash32(p[0], argPath(0), 'transaction hash')),
    },
  };
}
