// The benchmark harness's loop: snapshot, 200 transactions, revert, twenty times. Every
// round must end where it started (head, nonces, balances, an empty pool) and the last
// one with exactly the state the loop started with (compared through anvil_dumpState; the
// system contracts aside, which the block being built writes with its own timestamp).

import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseGwei, type Address, type Hex } from 'viem';
import { devAccount, rawPost, rpc, startTestNode, type TestNode } from '../helpers/node.js';
import { waitFor } from '../helpers/wait.js';
import { signTransfer } from '../helpers/transfer.js';

const ROUNDS = 20;
const TXS = 200;
const SENDERS = [1, 2, 3, 4].map(devAccount);
const SINK = '0x000000000000000000000000000000000000517c' as Address;

async function ok(url: string, method: string, params: unknown[] = []): Promise<any> {
  const r = await rpc(url, method, params);
  expect(r.error, `${method}: ${JSON.stringify(r.error)}`).toBeUndefined();
  return r.result;
}

/** EIP-4788 and EIP-2935: the open block's system calls write them, keyed by its timestamp and number. */
const SYSTEM = ['0x000f3df6d732807ef1319fb7b8bb8522d0beac02', '0x0000f90827f1c53a10cb7a02335b175320002935'];

/** The accounts of a dump but the system contracts'. */
async function dumpedAccounts(url: string): Promise<Record<string, unknown>> {
  const dump = (await ok(url, 'anvil_dumpState')) as string;
  const { accounts } = JSON.parse(gunzipSync(Buffer.from(dump.slice(2), 'hex')).toString()) as { accounts: Record<string, unknown> };
  for (const a of SYSTEM) delete accounts[a];
  return accounts;
}

describe('a harness loop: snapshot, 200 transactions, revert', () => {
  let t: TestNode;
  let url: string;
  beforeAll(async () => {
    t = await startTestNode({ configure: (c) => void (c.chain.preconfIntervalMs = 20) });
    url = t.node.url;
    // Blocks sealed only when the loop says, so that the head it starts from stays put.
    await ok(url, 'anvil_setIntervalMining', [0]);
  });
  afterAll(() => t?.stop());

  it(`ends ${ROUNDS} rounds with the state it started with`, async () => {
    // The same 200 signed transactions every round: after a revert their nonces are free again.
    const perSender = TXS / SENDERS.length;
    const raws: Hex[] = [];
    for (const s of SENDERS) {
      for (let n = 0; n < perSender; n++) {
        raws.push(await signTransfer(s, { to: SINK, nonce: n, value: BigInt(n + 1), maxFeePerGas: parseGwei('100') }));
      }
    }
    const start = await dumpedAccounts(url);
    const startHead = await ok(url, 'eth_getBlockByNumber', ['latest', false]);
    expect(Object.keys(start).length).toBeGreaterThanOrEqual(10);
    const sinkTotal = BigInt(SENDERS.length) * BigInt((perSender * (perSender + 1)) / 2);
    for (let round = 0; round < ROUNDS; round++) {
      const id = await ok(url, 'evm_snapshot');
      const snapHead = await ok(url, 'eth_getBlockByNumber', ['latest', false]);
      const body = JSON.stringify(raws.map((raw, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_sendRawTransaction', params: [raw] })));
      const sent = (await rawPost(url, body)).json as { error?: unknown }[];
      expect(
        sent.filter((r) => r.error !== undefined),
        `round ${round}`,
      ).toEqual([]);
      await waitFor(async () => BigInt(await ok(url, 'eth_getBalance', [SINK, 'pending'])) === sinkTotal, 20_000, `round ${round}: all ${TXS} pre-confirmed`);
      // Sealed, and a block after them: the revert goes back over sealed blocks too.
      await ok(url, 'anvil_mine', ['0x2']);
      expect(BigInt(await ok(url, 'eth_getBalance', [SINK, 'latest']))).toBe(sinkTotal);
      expect(await ok(url, 'evm_revert', [id]), `round ${round}`).toBe(true);
      expect(await ok(url, 'eth_getBlockByNumber', ['latest', false])).toMatchObject({ number: snapHead.number, hash: snapHead.hash });
      expect(await ok(url, 'eth_getBalance', [SINK, 'pending'])).toBe('0x0');
      for (const s of SENDERS) expect(await ok(url, 'eth_getTransactionCount', [s.address, 'pending'])).toBe('0x0');
      expect(await ok(url, 'txpool_status')).toEqual({ pending: '0x0', queued: '0x0' });
    }
    expect(await dumpedAccounts(url)).toEqual(start);
    expect(await ok(url, 'eth_getBlockByNumber', ['latest', false])).toMatchObject({ number: startHead.number, hash: startHead.hash });
  });
});
