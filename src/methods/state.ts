// Account state at a block: balance, nonce, code, storage. Cheap reads, answered
// synchronously (a native call costs less than the promise machinery around it).

import { blockSelector } from '../validation/block.js';
import { address, argPath, storageSlot } from '../validation/primitives.js';
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
    eth_getStorageAt: {
      maxParams: 3,
      handler: (p) =>
        chain.getStorageAt(address(p[0], argPath(0)), storageSlot(p[1], argPath(1)), blockSelector(p[2], 2, 'latest')),
    },
  };
}
