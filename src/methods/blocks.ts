// Blocks, transactions and receipts by number, hash or tag. The ...ByNumber methods take a
// number or a tag only, as in geth (rpc.BlockNumber): a 32-byte value there is refused as
// a number too large, not looked up as a hash.

import { blockNumberOrTag, blockSelector } from '../validation/block.js';
import { argPath, bool, hash32, quantity64 } from '../validation/primitives.js';
import type { MethodOptions, MethodTable } from './index.js';

export function blockMethods({ chain, publicEndpoint }: MethodOptions): MethodTable {
  const fullFlag = (v: unknown): boolean => (v === undefined ? false : bool(v, argPath(1), 'full transactions flag'));
  const txInBlock = (block: string, index: unknown): string | Promise<string> =>
    chain.getTransactionByBlockAndIndex(block, quantity64(index, argPath(1), 'transaction index'));
  const txCount = (block: string): string | Promise<string> => chain.getBlockTransactionCount(block);
  const byNumber = (v: unknown): string => blockNumberOrTag(v, argPath(0));
  // No uncles on this chain: 0 for a block that exists, null (as geth) for one that does not.
  const uncles = (count: string): string => (count === 'null' ? 'null' : '"0x0"');
  const uncleCount = (block: string): string | Promise<string> => {
    const count = txCount(block);
    return typeof count === 'string' ? uncles(count) : count.then(uncles);
  };
  return {
    eth_getBlockByNumber: {
      maxParams: 2,
      handler: (p, ctx) => chain.getBlock(byNumber(p[0]), fullFlag(p[1]), ctx?.client),
    },
    eth_getBlockByHash: {
      maxParams: 2,
      handler: (p, ctx) => chain.getBlock(hash32(p[0], argPath(0), 'block hash'), fullFlag(p[1]), ctx?.client),
    },
    eth_getBlockReceipts: {
      maxParams: 1,
      forbidden: publicEndpoint,
      cost: 'pooled',
      handler: (p, ctx) => chain.getBlockReceipts(blockSelector(p[0], 0), ctx?.client),
    },
    eth_getTransactionByHash: {
      maxParams: 1,
      handler: (p) => chain.getTransaction(hash32(p[0], argPath(0), 'transaction hash')),
    },
    eth_getTransactionReceipt: {
      maxParams: 1,
      handler: (p) => chain.getTransactionReceipt(hash32(p[0], argPath(0), 'transaction hash')),
    },
    eth_getBlockTransactionCountByNumber: { maxParams: 1, handler: (p) => txCount(byNumber(p[0])) },
    eth_getBlockTransactionCountByHash: {
      maxParams: 1,
      handler: (p) => txCount(hash32(p[0], argPath(0), 'block hash')),
    },
    eth_getTransactionByBlockNumberAndIndex: {
      maxParams: 2,
      handler: (p) => txInBlock(byNumber(p[0]), p[1]),
    },
    eth_getTransactionByBlockHashAndIndex: {
      maxParams: 2,
      handler: (p) => txInBlock(hash32(p[0], argPath(0), 'block hash'), p[1]),
    },
    eth_getUncleCountByBlockNumber: { maxParams: 1, handler: (p) => uncleCount(byNumber(p[0])) },
    eth_getUncleCountByBlockHash: { maxParams: 1, handler: (p) => uncleCount(hash32(p[0], argPath(0), 'block hash')) },
  };
}
