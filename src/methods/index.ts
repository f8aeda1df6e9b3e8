// The method registry: every JSON-RPC method the node serves, by name.

import type { Chain } from '../native.js';
import { Code, RpcError } from '../errors/index.js';
import type { Method } from '../protocol/jsonrpc.js';
import type { SubscriptionHub } from '../subscriptions/hub.js';
import { chainMethods } from './chain.js';
import { stateMethods } from './state.js';
import { executionMethods } from './execution.js';
import { blockMethods } from './blocks.js';
import { transactionMethods } from './transactions.js';
import { feeMethods } from './fees.js';
import { logMethods } from './logs.js';
import { txpoolMethods } from './txpool.js';
import { debugMethods } from './debug.js';
import { devMethods } from './dev.js';

export interface MethodOptions {
  chain: Chain;
  chainId: number;
  clientVersion: string;
  /** --public: eth_getBlockReceipts is refused with HTTP 403. */
  publicEndpoint: boolean;
  /** --no-preconf: pending equals latest and eth_simulateV1 does not exist. */
  preconf: boolean;
  /** Builder events: eth_sendRawTransactionSync waits on them. */
  hub: SubscriptionHub;
  /** --dev: the test methods (anvil_*, evm_*, hardhat_*) exist; otherwise they are unknown. */
  dev: boolean;
}

/** Over HTTP there is nowhere to deliver notifications (WebSocket sessions override these). */
const httpOnly = (name: string): Method => ({
  maxParams: 2,
  handler: () => {
    throw new RpcError(Code.MethodNotFound, `notifications not supported: ${name} needs a WebSocket connection`);
  },
});

export type MethodTable = Record<string, Method>;

export function buildMethods(opts: MethodOptions): Map<string, Method> {
  const table: MethodTable = {
    ...chainMethods(opts),
    ...stateMethods(opts),
    ...executionMethods(opts),
    ...blockMethods(opts),
    ...transactionMethods(opts),
    ...feeMethods(opts),
    ...logMethods(opts),
    ...txpoolMethods(opts),
    ...debugMethods(opts),
    ...(opts.dev ? devMethods(opts) : {}),
    eth_subscribe: httpOnly('eth_subscribe'),
    eth_unsubscribe: httpOnly('eth_unsubscribe'),
  };
  return new Map(Object.entries(table));
}
