// Account state at a block: balance, nonce, code, storage. Cheap reads, answered
// synchronously (a native call costs less than the promise machinery around it).

import { blockSelector } from '../validation/block.js';
import { address, argPath, fail, storageSlot } from '../validation/primitives.js';

const MAX_PROOF_KEYS = 1024;
import type { MethodOptions, MethodTable } from './index.js';

export function stateMethods({ chain }: MethodOptions): MethodTable {
  return {
    eth_getBalance: {
      maxParams: 2,
      handler: (p) => chain.getBalance(address(p[0], argPath(0)), blockSelector(p[1], 1, 'latest')),
    },
    eth_getTransactionCount: {
      maxParams: 2,
      handler: (p) => chain.getTransactionCount(address(p[0], argPath(0)), blockSelector(p[1], 1, 'latest')),
    },
    eth_getCode: {
      maxParams: 2,
      handler: (p) => chain.getCode(address(p[0], argPath(0)), blockSelector(p[1], 1, 'latest')),
    },
    // EIP-1186. Keys are echoed as given (as geth does); at most 1024 per request.
    eth_getProof: {
      maxParams: 3,
      cost: 'pooled',
      handler: (p, ctx) => {
        if (!Array.isArray(p[1])) throw fail(argPath(1), `storage keys must be an array, got ${JSON.stringify(p[1])}`);
        if (p[1].length > MAX_PROOF_KEYS) throw fail(argPath(1), `too many storage keys: ${p[1].length} > ${MAX_PROOF_KEYS}`);
        const keys = p[1].map((k, i) => {
          storageSlot(k, `${argPath(1)}[${i}]`);
          return k as string;
        });
        return chain.getProof(address(p[0], argPath(0)), keys, blockSelector(p[2], 2, 'latest'), ctx?.client);
      },
    },
    eth_getStorageAt: {
      maxParams: 3,
      handler: (p) => chain.getStorageAt(address(p[0], argPath(0)), storageSlot(p[1], argPath(1)), blockSelector(p[2], 2, 'latest')),
    },
  };
}
