// eth_getLogs over sealed blocks and the block being built.

import { logsQuery } from '../validation/filter.js';
import type { MethodOptions, MethodTable } from './index.js';

export function logMethods({ chain }: MethodOptions): MethodTable {
  return {
    eth_getLogs: {
      maxParams: 1,
      cost: 'heavy',
      handler: (p, ctx) => {
        const q = logsQuery(p[0], 0);
        // geth's filter shape, as alloy's Filter reads it.
        return chain.getLogs({ fromBlock: q.fromBlock, toBlock: q.toBlock, blockHash: q.blockHash, address: q.addresses, topics: q.topics }, ctx?.client);
      },
    },
  };
}
