// Identity of the node and the chain: what clients ask before anything else.

import type { MethodOptions, MethodTable } from './index.js';

export function chainMethods({ chain, chainId, clientVersion }: MethodOptions): MethodTable {
  const chainIdHex = JSON.stringify(`0x${chainId.toString(16)}`);
  const netVersion = JSON.stringify(String(chainId));
  const version = JSON.stringify(clientVersion);
  return {
    eth_chainId: { maxParams: 0, handler: () => chainIdHex },
    net_version: { maxParams: 0, handler: () => netVersion },
    net_listening: { maxParams: 0, handler: () => 'true' },
    net_peerCount: { maxParams: 0, handler: () => '"0x0"' },
    web3_clientVersion: { maxParams: 0, handler: () => version },
    eth_syncing: { maxParams: 0, handler: () => 'false' },
    eth_mining: { maxParams: 0, handler: () => 'false' },
    eth_hashrate: { maxParams: 0, handler: () => '"0x0"' },
    // The address the next block credits its fees to (anvil_setCoinbase on --dev changes it).
    eth_coinbase: { maxParams: 0, handler: () => chain.coinbase() },
    // The dev chain's funded accounts (their keys are public); none on other chains.
    eth_accounts: { maxParams: 0, handler: () => chain.accounts() },
    eth_blockNumber: { maxParams: 0, handler: () => chain.blockNumber() },
  };
}
