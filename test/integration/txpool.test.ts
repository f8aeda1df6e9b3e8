// txpool_status, txpool_content, txpool_contentFrom, txpool_inspect in geth's shapes:
// senders keyed by checksummed address, transactions by decimal nonce; "pending" is
// executable, "queued" waits behind a nonce gap. Compared with anvil (which keys senders in
// lower case) on the same signed transactions.

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { getAddress, parseGwei, type Hex } from 'viem';
import { devAccount, rpc, startTestNode, type TestNode } from '../helpers/node.js';
import { startAnvil, type Anvil } from '../helpers/anvil.js';
import { signTransfer } from '../helpers/transfer.js';

type Listing<T> = { pending: Record<string, Record<string, T>>; queued: Record<string, Record<string, T>> };

const lowerKeys = <T>(l: Listing<T>): Listing<T> => ({
  pending: Object.fromEntries(Object.entries(l.pending).map(([k, v]) => [k.toLowerCase(), v])),
  queued: Object.fromEntries(Object.entries(l.queued).map(([k, v]) => [k.toLowerCase(), v])),
});

/** Waits (vitest's vi.waitFor) until `probe` holds. */
const until = (what: string, probe: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> =>
  vi.waitFor(
    async () => {
      if (!(await probe())) throw new Error(`timed out waiting for ${what}`);
    },
    { timeout: timeoutMs, interval: 20 },
  );

const transfer = (i: number, nonce: number): Promise<Hex> =>
  signTransfer(devAccount(i), {
    to: devAccount(9).address,
    nonce,
    value: BigInt(nonce + 1),
    maxFeePerGas: parseGwei('3'),
    maxPriorityFeePerGas: parseGwei('1'),
  });

// A legacy deployment of an empty contract (init code returns nothing).
const legacyCreate = (i: number, nonce: number): Promise<Hex> =>
  devAccount(i).signTransaction({ chainId: 31337, type: 'legacy', data: '0x600080f3', gas: 60000n, gasPrice: parseGwei('4'), nonce });

describe('txpool_* against anvil on the same transactions', () => {
  let t: TestNode;
  let anvil: Anvil;
  const A = devAccount(0).address;
  const C = devAccount(2).address;

  beforeAll(async () => {
    // Nothing is pre-confirmed during the test: every transaction stays in the pool.
    t = await startTestNode({
      configure: (cfg) => {
        cfg.chain.preconfIntervalMs = 600_000;
        cfg.chain.blockTimeMs = 600_000;
      },
    });
    anvil = await startAnvil(['--no-mining', '--hardfork', 'prague']);
    // A: 0, 1 executable, 3 behind a gap; B: a legacy deployment; C: 1 behind a gap at 0.
    const raws = [await transfer(0, 0), await transfer(0, 1), await transfer(0, 3), await legacyCreate(1, 0), await transfer(2, 1)];
    for (const url of [t.node.url, anvil.url]) {
      for (const raw of raws) expect((await rpc(url, 'eth_sendRawTransaction', [raw])).error).toBeUndefined();
    }
  });
  afterAll(async () => {
    await t?.stop();
    await anvil?.stop();
  });

  it('txpool_status counts pending and queued as anvil does', async () => {
    const ours = (await rpc(t.node.url, 'txpool_status')).result;
    expect(ours).toEqual({ pending: '0x3', queued: '0x2' });
    expect(ours).toEqual((await rpc(anvil.url, 'txpool_status')).result);
  });

  it('txpool_content: the same transaction objects, under checksummed senders and decimal nonces', async () => {
    const ours = (await rpc(t.node.url, 'txpool_content')).result as Listing<Record<string, unknown>>;
    for (const k of [...Object.keys(ours.pending), ...Object.keys(ours.queued)]) expect(k).toBe(getAddress(k));
    expect(Object.keys(ours.pending[A]!)).toEqual(['0', '1']);
    expect(Object.keys(ours.queued[A]!)).toEqual(['3']);
    expect(Object.keys(ours.queued[C]!)).toEqual(['1']);
    expect(ours.pending[A]!['0']).toMatchObject({ blockHash: null, blockNumber: null, transactionIndex: null, gasPrice: '0xb2d05e00' });
    expect(lowerKeys(ours)).toEqual((await rpc(anvil.url, 'txpool_content')).result);
  });

  it('txpool_inspect: geth one-line summaries, the fee cap as price, "contract creation" for deployments', async () => {
    const ours = (await rpc(t.node.url, 'txpool_inspect')).result as Listing<string>;
    const to = devAccount(9).address; // checksummed, as geth prints it
    expect(ours.pending[A]!['1']).toBe(`${to}: 2 wei + 21000 gas × 3000000000 wei`);
    expect(ours.pending[devAccount(1).address]!['0']).toBe('contract creation: 0 wei + 60000 gas × 4000000000 wei');
    const lower = (l: Listing<string>): Listing<string> => JSON.parse(JSON.stringify(lowerKeys(l)).toLowerCase());
    expect(lower(ours)).toEqual(lower((await rpc(anvil.url, 'txpool_inspect')).result));
  });

  it('txpool_contentFrom: one sender, the same objects as txpool_content; empty for others', async () => {
    const content = (await rpc(t.node.url, 'txpool_content')).result as Listing<unknown>;
    expect((await rpc(t.node.url, 'txpool_contentFrom', [A.toLowerCase()])).result).toEqual({ pending: content.pending[A], queued: content.queued[A] });
    expect((await rpc(t.node.url, 'txpool_contentFrom', [devAccount(7).address])).result).toEqual({ pending: {}, queued: {} });
    expect((await rpc(t.node.url, 'txpool_contentFrom', ['0x12'])).error.code).toBe(-32602);
  });

  it('filling a gap moves the queued transaction to pending, as preconf_transactionStatus says', async () => {
    const raw = await transfer(0, 2);
    expect((await rpc(t.node.url, 'eth_sendRawTransaction', [raw])).error).toBeUndefined();
    expect((await rpc(t.node.url, 'txpool_status')).result).toEqual({ pending: '0x5', queued: '0x1' });
    const content = (await rpc(t.node.url, 'txpool_content')).result as Listing<{ hash: string }>;
    expect(Object.keys(content.pending[A]!)).toEqual(['0', '1', '2', '3']);
    expect(content.queued[A]).toBeUndefined();
    expect((await rpc(t.node.url, 'preconf_transactionStatus', [content.pending[A]!['3']!.hash])).result.status).toBe('pending');
    expect((await rpc(t.node.url, 'preconf_transactionStatus', [content.queued[C]!['1']!.hash])).result.status).toBe('queued');
  });
});

describe('txpool_* at the default cadence', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode();
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('a pre-confirmed transaction leaves the listing; one behind a gap stays queued', async () => {
    const executable = (await rpc(t.node.url, 'eth_sendRawTransaction', [await transfer(3, 0)])).result as string;
    const gapped = (await rpc(t.node.url, 'eth_sendRawTransaction', [await transfer(3, 2)])).result as string;
    await until('pre-confirmation', async () => (await rpc(t.node.url, 'preconf_transactionStatus', [executable])).result.status !== 'pending');
    expect((await rpc(t.node.url, 'txpool_status')).result).toEqual({ pending: '0x0', queued: '0x1' });
    const content = (await rpc(t.node.url, 'txpool_content')).result as Listing<{ hash: string }>;
    expect(content.pending).toEqual({});
    expect(content.queued[devAccount(3).address]!['2']!.hash).toBe(gapped);
  });
});
