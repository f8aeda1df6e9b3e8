// Fee data for wallets: gas price, priority fee, fee history.

import { blockNumberOrTag } from '../validation/block.js';
import { argPath, fail, quantityOrNumber } from '../validation/primitives.js';
import type { MethodOptions, MethodTable } from './index.js';

const MAX_FEE_HISTORY_BLOCKS = 1024n;
/** geth's limit (eth/gasprice: maxQueryLimit): each percentile is one more number per block. */
export const MAX_REWARD_PERCENTILES = 100;

export function feeMethods({ chain }: MethodOptions): MethodTable {
  return {
    eth_gasPrice: { maxParams: 0, handler: () => chain.gasPrice() },
    eth_maxPriorityFeePerGas: { maxParams: 0, handler: () => chain.maxPriorityFeePerGas() },
    eth_feeHistory: {
      maxParams: 3,
      cost: 'pooled',
      handler: (p, ctx) => {
        // geth accepts the block count as a hex quantity or a plain number, any u64, and
        // serves at most 1,024 blocks (a larger count is clamped, not refused).
        const count = quantityOrNumber(p[0], argPath(0), 'block count');
        const newest = blockNumberOrTag(p[1], argPath(1));
        let percentiles: number[] = [];
        if (p[2] !== undefined && p[2] !== null) {
          if (Array.isArray(p[2]) && p[2].length > MAX_REWARD_PERCENTILES) {
            throw fail(argPath(2), `invalid reward percentile: over the query limit ${MAX_REWARD_PERCENTILES} (got ${p[2].length})`);
          }
          if (!Array.isArray(p[2]) || p[2].some((x) => typeof x !== 'number' || !(x >= 0 && x <= 100))) {
            throw fail(argPath(2), 'reward percentiles must be an array of numbers between 0 and 100');
          }
          for (let i = 1; i < p[2].length; i++) {
            if ((p[2][i] as number) < (p[2][i - 1] as number)) {
              throw fail(argPath(2), 'reward percentiles must be in increasing order');
            }
          }
          percentiles = p[2] as number[];
        }
        return chain.feeHistory(
          {
            blockCount: Number(count < MAX_FEE_HISTORY_BLOCKS ? count : MAX_FEE_HISTORY_BLOCKS),
            newestBlock: newest,
            rewardPercentiles: percentiles,
          },
          ctx?.client,
        );
      },
    },
  };
}
