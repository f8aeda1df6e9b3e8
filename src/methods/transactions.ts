// Submitting transactions.

import { argPath, hash32, hexBytes } from '../validation/primitives.js';
import type { MethodOptions, MethodTable } from './index.js';

export function transactionMethods({ chain }: MethodOptions): MethodTable {
  return {
    eth_sendRawTransaction: {
      maxParams: 1,
      handler: (p) => chain.sendRawTransaction(hexBytes(p[0], argPath(0), 'raw transaction')),
    },
    // Where a transaction stands: pending | queued | preconfirmed | included | dropped (with
    // the reason) | unknown. Never reports a dropped transaction as pending.
    preconf_transactionStatus: {
      maxParams: 1,
      handler: (p) => chain.txStatus(hash32(p[0], argPath(0), 'transaction hash')),
    },
  };
}
