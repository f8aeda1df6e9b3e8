// The method registry: every JSON-RPC method the node serves, by name.

import type { Chain } from '../native.js';
import type { Method } from '../protocol/jsonrpc.js';
import { chainMethods } from './chain.js';
import { stateMethods } from './state.js';
import { executionMethods } from './execution.js';
import { blockMethods } from './blocks.js';
import { transactionMethods } from './transactions.js';
import { feeMethods } from './fees.js';

export interface MethodOptions {
  chain: Chain;
  chainId: number;
  clientVersion: string;
  /** --public: eth_getBlockReceipts is refused with HTTP 403. */
  publicEndpoint: boolean;
  /** --no-preconf: pending equals latest and eth_simulateV1 does not exist. */
  preconf: boolean;
}

export type MethodTable = Record<string, Method>;

export function buildMethods(opts: MethodOptions): Map<string, Method> {
  const table: MethodTable = {
    ...chainMethods(opts),
    ...stateMethods(opts),
    ...executionMethods(opts),
    ...blockMethods(opts),
    ...transactionMethods(opts),
    ...feeMethods(opts),
  };
  return new Map(Object.entries(table));
}
