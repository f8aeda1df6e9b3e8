// WebSocket JSON-RPC on the same port, subscriptions to pre-confirmations and
// sealed blocks, eth_getLogs, and eth_sendRawTransactionSync.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, encodeFunctionData, parseAbiItem, parseGwei, webSocket, type Hex } from 'viem';
import { contract } from '../helpers/contracts.js';
import { PROBE, TOKEN, HOLDER, testGenesis } from '../helpers/genesis.js';
import { devAccount, rpc, startTestNode, withTestNode, type TestNode } from '../helpers/node.js';
import { quietPeriod, waitFor } from '../helpers/wait.js';
import { RawWs } from '../helpers/ws.js';

const ZERO_HASH = `0x${'00'.repeat(32)}`;

describe('WebSocket', () => {
  let t: TestNode;
  const probe = contract('Probe');
  const token = contract('Token');
  let nonce = 0;
  const bump = async (i = 0, n?: number): Promise<Hex> => {
    const raw = await devAccount(i).signTransaction({
      chainId: 31337,
      type: 'eip1559',
      to: PROBE,
      gas: 100_000n,
      maxFeePerGas: parseGwei('20'),
      maxPriorityFeePerGas: 1n,
      nonce: n ?? nonce++,
      data: encodeFunctionData({ abi: probe.abi, functionName: 'bump' }),
    });
    return (await rpc(t.node.url, 'eth_sendRawTransaction', [raw])).result;
  };

  beforeAll(async () => {
    t = await startTestNode({
      configure: (c) => {
        c.chain.genesis = JSON.stringify(
          testGenesis('prague', {
            [devAccount(0).address]: { balance: '0x3635c9adc5dea00000' },
            [devAccount(1).address]: { balance: '0x3635c9adc5dea00000' },
            [devAccount(2).address]: { balance: '0x3635c9adc5dea00000' },
          }),
        );
        c.chain.preconfIntervalMs = 50;
        c.chain.blockTimeMs = 500;
        c.server.wsMaxBackpressureBytes = 64 * 1024;
      },
    });
  });
  afterAll(() => t?.stop());

  it('serves every HTTP method over the socket, with the same validation and batches', async () => {
    const ws = await RawWs.open(t.node.wsUrl);
    try {
      expect((await ws.request('eth_chainId')).result).toBe('0x7a69');
      const balance = await ws.request('eth_getBalance', [HOLDER, 'latest']);
      expect(balance.result).toBe((await rpc(t.node.url, 'eth_getBalance', [HOLDER, 'latest'])).result);
      expect((await ws.request('eth_getBalance', ['0x12', 'latest'])).error.code).toBe(-32602);
      expect((await ws.request('nope')).error.code).toBe(-32601);
      const batch = await ws.batch([
        ['eth_chainId', []],
        ['eth_blockNumber', []],
      ]);
      expect(batch).toHaveLength(2);
      const call = await ws.request('eth_call', [{ to: TOKEN, data: encodeFunctionData({ abi: token.abi, functionName: 'totalSupply' }) }, 'latest']);
      expect(BigInt(call.result)).toBe(10n ** 24n);
      // Over HTTP there are no subscriptions.
      expect((await rpc(t.node.url, 'eth_subscribe', ['newHeads'])).error.message).toMatch(/notifications not supported/);
      expect((await ws.request('eth_subscribe', ['nothing'])).error.code).toBe(-32602);
    } finally {
      await ws.close();
    }
  });

  it('newFlashblockTransactions with full objects delivers a sent transaction and its logs before its block is sealed', async () => {
    const ws = await RawWs.open(t.node.wsUrl);
    try {
      const sub = (await ws.request('eth_subscribe', ['newFlashblockTransactions', true])).result as string;
      const hashes = (await ws.request('eth_subscribe', ['newFlashblockTransactions'])).result as string;
      const heads = (await ws.request('eth_subscribe', ['newHeads'])).result as string;
      const hash = await bump();
      const tx = await ws.waitFor(sub, (r) => r.hash === hash);
      // Before its block is sealed: notifications arrive in order on one socket, and the
      // block's newHeads notification had not arrived when the transaction's did.
      const sealedBefore = ws.of(heads).filter((h) => BigInt(h.number) >= BigInt(tx.blockNumber));
      expect(sealedBefore).toEqual([]);
      expect(tx.blockHash).toBeNull();
      const head = await ws.waitFor(heads, (h) => h.number === tx.blockNumber);
      expect(head.hash).toMatch(/^0x[0-9a-f]{64}$/);
      expect(tx.transactionIndex).toMatch(/^0x/);
      expect(tx.logs).toHaveLength(1);
      expect(tx.logs[0].address).toBe(PROBE);
      expect(await ws.waitFor(hashes, (r) => r === hash)).toBe(hash);
      // Visible to a pending read made right after.
      const status = (await rpc(t.node.url, 'preconf_transactionStatus', [hash])).result;
      expect(['preconfirmed', 'included']).toContain(status.status);
      expect(status.blockNumber).toBe(tx.blockNumber);
    } finally {
      await ws.close();
    }
  });

  it('pendingLogs filters by address and topics; unsubscribe stops the stream', async () => {
    const ws = await RawWs.open(t.node.wsUrl);
    try {
      const bumped = '0x' + (await import('viem')).keccak256(new TextEncoder().encode('Bumped(address,uint256)')).slice(2);
      const mine = (await ws.request('eth_subscribe', ['pendingLogs', { address: PROBE, topics: [bumped] }])).result;
      const other = (await ws.request('eth_subscribe', ['pendingLogs', { address: TOKEN }])).result;
      const wrongTopic = (await ws.request('eth_subscribe', ['pendingLogs', { topics: [[ZERO_HASH], null] }])).result;
      const hash = await bump();
      const log = await ws.waitFor(mine, (r) => r.transactionHash === hash);
      expect(log.topics[0]).toBe(bumped);
      expect(log.blockHash).toBe(ZERO_HASH);
      // Nothing for the non-matching filters: a quiet period on purpose (it is the point).
      await quietPeriod(200);
      expect(ws.of(other)).toHaveLength(0);
      expect(ws.of(wrongTopic)).toHaveLength(0);
      expect((await ws.request('eth_unsubscribe', [mine])).result).toBe(true);
      expect((await ws.request('eth_unsubscribe', [mine])).result).toBe(false);
      const count = ws.of(mine).length;
      const hash2 = await bump();
      await waitFor(async () => (await rpc(t.node.url, 'eth_getTransactionReceipt', [hash2])).result, 10_000, 'the second bump to be pre-confirmed');
      // After it landed, the unsubscribed stream stays silent: a quiet period on purpose.
      await quietPeriod(150);
      expect(ws.of(mine)).toHaveLength(count);
    } finally {
      await ws.close();
    }
  });

  it('newPendingTransactions announces accepted hashes, stops when the last subscriber leaves and starts again for a new one', async () => {
    // The chain sends pool announcements only while some event loop wants them: this
    // follows that switch off and back on.
    const ws = await RawWs.open(t.node.wsUrl);
    try {
      const first = (await ws.request('eth_subscribe', ['newPendingTransactions'])).result as string;
      const hash = await bump(2, 0);
      expect(await ws.waitFor(first, (r) => r === hash)).toBe(hash);
      expect((await ws.request('eth_unsubscribe', [first])).result).toBe(true);
      const unheard = await bump(2, 1);
      await waitFor(async () => (await rpc(t.node.url, 'eth_getTransactionReceipt', [unheard])).result, 10_000, 'the unannounced bump to be pre-confirmed');
      const second = (await ws.request('eth_subscribe', ['newPendingTransactions'])).result as string;
      const again = await bump(2, 2);
      expect(await ws.waitFor(second, (r) => r === again)).toBe(again);
      expect(ws.of(first)).toEqual([hash]);
      expect(ws.of(second)).toEqual([again]);
    } finally {
      await ws.close();
    }
  });

  it('viem watchBlocks, watchContractEvent and watchPendingTransactions over webSocket()', async () => {
    const client = createPublicClient({ chain: t.chain, transport: webSocket(t.node.wsUrl) });
    const blocks: bigint[] = [];
    const events: Hex[] = [];
    const pendingTxs: Hex[] = [];
    const unwatchBlocks = client.watchBlocks({ onBlock: (b) => blocks.push(b.number!) });
    const unwatchEvents = client.watchContractEvent({
      address: PROBE,
      abi: probe.abi,
      eventName: 'Bumped',
      onLogs: (logs) => events.push(...logs.map((l) => l.transactionHash!)),
    });
    const unwatchEvent = client.watchEvent({ address: PROBE, event: parseAbiItem('event Bumped(address indexed by, uint256 value)'), onLogs: () => {} });
    const unwatchPending = client.watchPendingTransactions({ onTransactions: (h) => pendingTxs.push(...h) });
    try {
      // Four subscriptions (blocks, two event filters, pending transactions) on the server.
      await waitFor(
        async () => ((await (await fetch(`${t.node.url}/health`)).json()) as { subscriptions: number }).subscriptions >= 4,
        5_000,
        "viem's four subscriptions on the server",
      );
      const hash = await bump();
      await waitFor(() => events.includes(hash) && pendingTxs.includes(hash), 10_000, 'the bump as a contract event and as a pending transaction');
      await waitFor(() => blocks.length >= 2, 5_000, 'two new blocks');
      for (let i = 1; i < blocks.length; i++) expect(blocks[i]).toBe(blocks[i - 1]! + 1n);
    } finally {
      unwatchBlocks();
      unwatchEvents();
      unwatchEvent();
      unwatchPending();
      await client.transport
        .getRpcClient?.()
        .then((c: { close(): void }) => c.close())
        .catch(() => {});
    }
  });

  it('a consumer that stops reading is closed with 1008 and a reason; another keeps receiving every flashblock in order', async () => {
    const slow = await RawWs.open(t.node.wsUrl);
    const fast = await RawWs.open(t.node.wsUrl);
    try {
      const fastSub = (await fast.request('eth_subscribe', ['newFlashblocks'])).result;
      for (let i = 0; i < 90; i++) await slow.request('eth_subscribe', ['newFlashblocks']);
      await slow.request('eth_subscribe', ['newFlashblockTransactions', true]);
      // Stop reading: the kernel buffers fill, then the server's buffer passes its limit.
      (slow.socket as unknown as { _socket: { pause(): void } })._socket.pause();
      // Keep some transactions flowing so the messages are not tiny.
      // The server's /health counts open WebSocket connections: wait until it dropped the
      // slow one, then read what reached us (its close frame is queued behind the data).
      let n = 0;
      const connections = async () => ((await (await fetch(`${t.node.url}/health`)).json()) as { wsConnections: number }).wsConnections;
      expect(await connections()).toBe(2);
      await waitFor(
        async () => {
          if ((await connections()) < 2) return true;
          await bump(1, n++);
          return false;
        },
        20_000,
        'the server to drop the consumer that stopped reading',
      );
      expect(await connections()).toBe(1);
      (slow.socket as unknown as { _socket: { resume(): void } })._socket.resume();
      await waitFor(() => slow.closeInfo !== undefined, 15_000, 'the close frame on the slow socket');
      expect(slow.closeInfo!.code).toBe(1008);
      expect(slow.closeInfo!.reason).toMatch(/subscriber too slow/);
      // The fast subscriber saw every pre-confirmation, in order, without gaps.
      await waitFor(() => fast.of(fastSub).length > 20, 5_000, 'more than 20 flashblocks on the fast subscriber');
      const seen = fast.of(fastSub).map((b) => [BigInt(b.number), BigInt(b.preconfIndex)] as const);
      expect(seen.length).toBeGreaterThan(20);
      for (let i = 1; i < seen.length; i++) {
        const [pn, pi] = seen[i - 1]!;
        const [cn, ci] = seen[i]!;
        const next = (cn === pn && ci === pi + 1n) || (cn === pn + 1n && ci === 1n);
        expect(next, `(${pn},${pi}) -> (${cn},${ci})`).toBe(true);
      }
    } finally {
      slow.socket.terminate();
      await fast.close();
    }
  });

  it('eth_getLogs over sealed and pending blocks, and its error cases', async () => {
    // Find a bump's log while it is only pre-confirmed (one landing in a block's last
    // pre-confirmation is sealed at once: try the next one).
    let hash: Hex = '0x';
    let pendingLog: { blockHash: string } | undefined;
    for (let attempt = 0; attempt < 5 && !pendingLog; attempt++) {
      hash = await bump();
      const seen = await waitFor(
        async () => {
          const logs = (await rpc(t.node.url, 'eth_getLogs', [{ fromBlock: 'pending', toBlock: 'pending', address: PROBE }])).result as {
            transactionHash: string;
            blockHash: string;
          }[];
          const log = logs.find((l) => l.transactionHash === hash);
          if (log) return { log };
          const r = (await rpc(t.node.url, 'eth_getTransactionReceipt', [hash])).result;
          return r && r.blockHash !== ZERO_HASH ? { log: undefined } : null;
        },
        2_000,
        "the bump's log in the pending block (or its block sealed)",
        10,
      );
      pendingLog = seen.log;
    }
    expect(pendingLog?.blockHash).toBe(ZERO_HASH);
    const receipt = await waitFor(
      async () => {
        const r = (await rpc(t.node.url, 'eth_getTransactionReceipt', [hash])).result;
        return r && r.blockHash !== ZERO_HASH ? r : null;
      },
      10_000,
      'the bump to be sealed',
    );
    const sealed = (await rpc(t.node.url, 'eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest', address: [PROBE, TOKEN] }])).result as {
      transactionHash: string;
      blockHash: string;
    }[];
    expect(sealed.find((l) => l.transactionHash === hash)?.blockHash).toBe(receipt.blockHash);
    const byHash = (await rpc(t.node.url, 'eth_getLogs', [{ blockHash: receipt.blockHash, topics: [null, null] }])).result as { transactionHash: string }[];
    expect(byHash.map((l) => l.transactionHash)).toContain(hash);
    const none = (await rpc(t.node.url, 'eth_getLogs', [{ blockHash: receipt.blockHash, address: TOKEN }])).result;
    expect(none).toEqual([]);
    const reversed = await rpc(t.node.url, 'eth_getLogs', [{ fromBlock: '0x5', toBlock: '0x2' }]);
    expect(reversed.error).toEqual({ code: -32602, message: 'invalid block range params' });
    const beyond = await rpc(t.node.url, 'eth_getLogs', [{ fromBlock: '0x0', toBlock: '0xffffff' }]);
    expect(beyond.error).toEqual({ code: -32602, message: 'block range extends beyond current head block' });
    const both = await rpc(t.node.url, 'eth_getLogs', [{ blockHash: receipt.blockHash, fromBlock: '0x1' }]);
    expect(both.error.code).toBe(-32602);
    const badTopic = await rpc(t.node.url, 'eth_getLogs', [{ topics: ['0x1234'] }]);
    expect(badTopic.error.code).toBe(-32602);
  });

  it('eth_sendRawTransactionSync answers with the receipt within a few intervals, or a timeout that carries the hash', async () => {
    const acct = devAccount(2);
    const base = { chainId: 31337, type: 'eip1559' as const, to: acct.address, gas: 21000n, maxFeePerGas: parseGwei('20'), maxPriorityFeePerGas: 1n };
    const n = (await rpc(t.node.url, 'eth_getTransactionCount', [acct.address, 'pending'])).result;
    const raw = await acct.signTransaction({ ...base, nonce: Number(n) });
    const started = Date.now();
    const r = await rpc(t.node.url, 'eth_sendRawTransactionSync', [raw]);
    const ms = Date.now() - started;
    expect(r.result.status).toBe('0x1');
    expect(ms).toBeLessThan(4 * 50 + 200);
    // A nonce gap never lands: the timeout names the hash.
    const gapped = await acct.signTransaction({ ...base, nonce: Number(n) + 5 });
    const timeout = await rpc(t.node.url, 'eth_sendRawTransactionSync', [gapped, 300]);
    expect(timeout.error.code).toBe(4);
    expect(timeout.error.data).toMatch(/^0x[0-9a-f]{64}$/);
    expect((await rpc(t.node.url, 'eth_sendRawTransactionSync', [gapped, 10 ** 9])).error.code).toBe(-32602);
    // viem's sendRawTransactionSync
    const client = createPublicClient({ chain: t.chain, transport: webSocket(t.node.wsUrl) });
    const viaViem = await (client as any).request({
      method: 'eth_sendRawTransactionSync',
      params: [await acct.signTransaction({ ...base, nonce: Number(n) + 1 })],
    });
    expect(viaViem.status).toBe('0x1');
  });
});

describe('WebSocket limits', () => {
  it('refuses subscriptions past the per-connection limit and connections past the server limit', async () => {
    await withTestNode(
      {
        configure: (c) => {
          c.server.wsMaxSubscriptions = 3;
          c.server.wsMaxConnections = 2;
        },
      },
      async (t) => {
        const open: RawWs[] = [];
        try {
          const a = await RawWs.open(t.node.wsUrl);
          open.push(a);
          for (let i = 0; i < 3; i++) expect((await a.request('eth_subscribe', ['newHeads'])).result).toMatch(/^0x/);
          const over = await a.request('eth_subscribe', ['newHeads']);
          expect(over.error.code).toBe(-32005);
          expect(over.error.message).toMatch(/too many subscriptions on this connection \(limit 3\)/);
          open.push(await RawWs.open(t.node.wsUrl));
          const refused = await RawWs.open(t.node.wsUrl).then(
            (ws) => {
              open.push(ws);
              return null;
            },
            (e: Error) => e,
          );
          expect(refused?.message).toMatch(/503/);
        } finally {
          await Promise.all(open.map((ws) => ws.close()));
        }
      },
    );
  });
});
