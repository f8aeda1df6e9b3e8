// geth's txpool namespace: what the pool holds, by sender and nonce. "pending" means
// executable (no nonce gap after the sender's nonce in the newest pre-confirmation),
// "queued" waits for a gap to fill; pre-confirmed transactions are no longer in the pool.

import { address, argPath } from '../validation/primitives.js';
import type { MethodOptions, MethodTable } from './index.js';

export function txpoolMethods({ chain }: MethodOptions): MethodTable {
  return {
    txpool_status: { maxParams: 0, handler: () => chain.txpoolStatus() },
    txpool_content: { maxParams: 0, handler: () => chain.txpoolContent() },
    txpool_contentFrom: { maxParams: 1, handler: (p) => chain.txpoolContentFrom(address(p[0], argPath(0))) },
    txpool_inspect: { maxParams: 0, handler: () => chain.txpoolInspect() },
  };
}
