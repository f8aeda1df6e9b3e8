// Submitting transactions.

import { argPath, hexBytes } from '../validation/primitives.js';
import type { MethodOptions, MethodTable } from './index.js';

export function transactionMethods({ chain }: MethodOptions): MethodTable {
  return {
    eth_sendRawTransaction: {
      maxParams: 1,
      handler: (p) => chain.sendRawTransaction(hexBytes(p[0], argPath(0), 'raw transaction')),
    },
  };
}
