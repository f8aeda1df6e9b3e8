// Playing op-node in tests: a JWT for the authenticated port, a client that signs every
// request, the OP dev chain's L1-info deposits, and payload attributes for its forks.

import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createPublicClient, defineChain, http, keccak256, toHex, type Hex } from 'viem';
import { chainConfig, serializeTransaction } from 'viem/op-stack';
import { startTestNode } from './node.js';
import { waitFor } from './wait.js';

/** An HS256 token with `iat` now, signed with `secret` (execution-apis authentication.md). */
export function jwt(secret: Buffer): string {
  const part = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  const signed = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ iat: Math.floor(Date.now() / 1000) })}`;
  return `${signed}.${createHmac('sha256', secret).update(signed).digest('base64url')}`;
}

export interface EngineAnswer {
  result?: any;
  error?: { code: number; message: string };
}

/** Calls on an Engine API port with a fresh token each time; the secret read from its file. */
export function engineClient(url: string, secretFile: string): (method: string, params: unknown[]) => Promise<EngineAnswer> {
  const secret = Buffer.from(readFileSync(secretFile, 'utf8').trim(), 'hex');
  return async (method, params) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${jwt(secret)}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    return (await res.json()) as EngineAnswer;
  };
}

/** The L1-info deposits of blocks 1..count as the OP dev chain builds them on its own clock:
 *  what op-node would derive for it (the dev chain's L1 values are fixed). */
export async function devChainL1Info(count: number): Promise<Hex[]> {
  const ref = await startTestNode({
    configure: (c) => void Object.assign(c.chain, { optimism: true, datadir: undefined, preconfIntervalMs: 50, blockTimeMs: 200 }),
  });
  try {
    const chain = defineChain({
      ...chainConfig,
      id: ref.node.chainId,
      name: 'op-dev',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [ref.node.url] } },
    });
    const client = createPublicClient({ chain, transport: http(ref.node.url, { retryCount: 0 }) });
    await waitFor(async () => (await client.getBlockNumber()) >= BigInt(count), 10_000, `block ${count} of the reference dev chain`);
    const raws: Hex[] = [];
    for (let n = 1n; n <= BigInt(count); n++) {
      const tx = (await client.getBlock({ blockNumber: n, includeTransactions: true })).transactions[0]!;
      if (tx.type !== 'deposit') throw new Error('the first transaction of an OP block is the L1-info deposit');
      const raw = serializeTransaction({
        type: 'deposit',
        sourceHash: tx.sourceHash,
        from: tx.from,
        to: tx.to!,
        mint: tx.mint,
        value: tx.value,
        gas: tx.gas,
        isSystemTx: tx.isSystemTx,
        data: tx.input,
      });
      if (keccak256(raw) !== tx.hash) throw new Error(`the L1-info deposit of block ${n} does not encode back to its hash`);
      raws.push(raw);
    }
    return raws;
  } finally {
    await ref.stop();
  }
}

/** op-node's attributes for the block after `parent` on the OP dev chain (Isthmus). */
export function devChainAttributes(parent: { timestamp: Hex; gasLimit: Hex }, transactions: Hex[], noTxPool = false) {
  return {
    timestamp: toHex(Math.max(Math.floor(Date.now() / 1000), Number(parent.timestamp) + 1)),
    prevRandao: toHex(randomBytes(32)),
    suggestedFeeRecipient: '0x4200000000000000000000000000000000000011',
    withdrawals: [],
    parentBeaconBlockRoot: toHex(randomBytes(32)),
    transactions,
    noTxPool,
    gasLimit: parent.gasLimit,
    eip1559Params: '0x0000000000000000',
  };
}
