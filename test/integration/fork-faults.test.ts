// A fork's upstream that stalls, answers 429 or goes away: every request that needs it
// fails in bounded time with a JSON-RPC error naming the upstream, nothing is cached from
// the failure, and the node answers again once the upstream does.

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Anvil } from '../helpers/anvil.js';
import { parseArgs, type Config } from '../../src/cli/index.js';
import { startForkNode, startProxiedUpstream, type ProxiedUpstream } from '../helpers/fork.js';
import { devAccount, rpc, type TestNode } from '../helpers/node.js';
import type { UpstreamProxy } from '../helpers/upstream-proxy.js';

let upstream: ProxiedUpstream;
let anvil: Anvil;
let proxy: UpstreamProxy;
let t: TestNode;

const cold = (i: number) => `0x${(0xc0_1d00 + i).toString(16).padStart(40, '0')}`;
const funded = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';

beforeAll(async () => {
  upstream = await startProxiedUpstream();
  ({ anvil, proxy } = upstream);
  t = await startForkNode(proxy.url);
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await upstream?.stop();
});

describe('a failing fork upstream', () => {
  it('a stalled upstream times out with an error naming it, and reads recover', async () => {
    await proxy.control({ mode: 'stall' });
    const started = Date.now();
    const r = await rpc(t.node.url, 'eth_getBalance', [cold(1), 'latest']);
    expect(r.error.code).toBe(-32000);
    expect(r.error.message).toBe(`fork upstream ${proxy.url} failed: no answer within 400 ms (after 3 attempts)`);
    expect(Date.now() - started).toBeLessThan(5_000);
    await proxy.control({ mode: 'pass' });
    expect((await rpc(t.node.url, 'eth_getBalance', [cold(1), 'latest'])).result).toBe('0x0');
    expect((await rpc(t.node.url, 'eth_getBalance', [funded, 'latest'])).result).toBe('0x21e19e0c9bab2400000');
  });

  it('429s are retried; past the retries they are an error, and calls fail the same way', async () => {
    await proxy.control({ mode: 'pass', fail: 2 });
    await proxy.reset();
    expect((await rpc(t.node.url, 'eth_getTransactionCount', [cold(2), 'latest'])).result).toBe('0x0');
    expect((await proxy.stats()).requests).toBe(3);

    await proxy.control({ mode: '429' });
    const r = await rpc(t.node.url, 'eth_getCode', [cold(3), 'latest']);
    expect(r.error.message).toBe(`fork upstream ${proxy.url} failed: rate limited (HTTP 429) after 3 attempts`);
    const call = await rpc(t.node.url, 'eth_call', [{ to: cold(4), data: '0x' }, 'latest']);
    expect(call.error.code).toBe(-32000);
    expect(call.error.message).toContain(`fork upstream ${proxy.url} failed`);
    await proxy.control({ mode: 'pass' });
    expect((await rpc(t.node.url, 'eth_getCode', [cold(3), 'latest'])).result).toBe('0x');
  });

  it('an upstream that drops connections or is gone gives a transport error', async () => {
    await proxy.control({ mode: 'drop' });
    const r = await rpc(t.node.url, 'eth_getBalance', [cold(5), 'latest']);
    expect(r.error.code).toBe(-32000);
    expect(r.error.message).toMatch(new RegExp(`^fork upstream ${proxy.url.replace(/\./g, '\\.')} failed: .+ \\(after 3 attempts\\)$`));
    await proxy.control({ mode: 'pass' });
    expect((await rpc(t.node.url, 'eth_getBalance', [cold(5), 'latest'])).result).toBe('0x0');
  });

  it('cold reads waiting on the upstream do not hold up the event loop: warm requests are answered meanwhile', async () => {
    const url = t.node.url;
    const warm = (await rpc(url, 'eth_getBalance', [funded, 'latest'])).result;
    await proxy.control({ mode: 'stall' });
    await proxy.reset();
    // Each needs the upstream: state of accounts never read, history before the fork.
    const reads: [string, unknown[]][] = [
      ['eth_getBalance', [cold(10), 'latest']],
      ['eth_getTransactionCount', [cold(11), 'latest']],
      ['eth_getCode', [cold(12), 'latest']],
      ['eth_getStorageAt', [cold(13), '0x0', 'latest']],
      ['eth_getTransactionByHash', [`0x${'ab'.repeat(32)}`]],
      ['eth_getTransactionReceipt', [`0x${'cd'.repeat(32)}`]],
    ];
    let waiting = reads.length;
    const answers = reads.map(([method, params]) => rpc(url, method, params).finally(() => (waiting -= 1)));
    // Every cold read has reached the upstream (which holds them for 3 × 400 ms) ...
    await vi.waitFor(async () => expect((await proxy.stats()).requests).toBeGreaterThanOrEqual(reads.length), { timeout: 1_000, interval: 20 });
    // ... and the node still answers what it holds.
    expect(BigInt((await rpc(url, 'eth_blockNumber')).result)).toBeGreaterThanOrEqual(0n);
    expect((await rpc(url, 'eth_getBalance', [funded, 'latest'])).result).toBe(warm);
    expect((await rpc(url, 'eth_chainId')).result).toBe('0x7a69');
    expect(waiting).toBe(reads.length);
    for (const r of await Promise.all(answers)) {
      expect(r.error.message).toBe(`fork upstream ${proxy.url} failed: no answer within 400 ms (after 3 attempts)`);
    }
    await proxy.control({ mode: 'pass' });
    expect((await rpc(url, 'eth_getStorageAt', [cold(13), '0x0', 'latest'])).result).toBe(`0x${'0'.repeat(64)}`);
    expect((await rpc(url, 'eth_getTransactionByHash', [`0x${'ab'.repeat(32)}`])).result).toBeNull();
  });
});

describe('calls that need the upstream', () => {
  it('cold calls, estimates, sends and access lists wait on the upstream threads: a warm call is answered meanwhile', async () => {
    const url = t.node.url;
    const warmCall = { from: funded, to: funded, data: '0x' };
    expect((await rpc(url, 'eth_call', [warmCall, 'latest'])).result).toBe('0x');
    await proxy.control({ mode: 'stall' });
    await proxy.reset();
    // More than the four calls threads, and of each method (but the one send) more than this
    // client may hold of them (three): waiting there, they would leave the warm call queued
    // behind them until the upstream gave up.
    const calls: [string, unknown[]][] = [];
    for (let i = 0; i < 3; i++) calls.push(['eth_call', [{ to: cold(20 + i), data: '0x' }, 'latest']]);
    calls.push(['eth_estimateGas', [{ from: funded, to: cold(30), value: '0x1' }, 'latest']]);
    calls.push(['eth_sendTransaction', [{ from: funded, to: cold(31), value: '0x1' }]]);
    for (let i = 0; i < 3; i++) calls.push(['eth_createAccessList', [{ from: funded, to: cold(32 + i), data: '0x' }, 'latest']]);
    const nonce = BigInt((await rpc(url, 'eth_getTransactionCount', [funded, 'pending'])).result);
    let waiting = calls.length;
    const answers = calls.map(([method, params]) => rpc(url, method, params).finally(() => (waiting -= 1)));
    try {
      await vi.waitFor(async () => expect((await proxy.stats()).requests).toBeGreaterThanOrEqual(calls.length), { timeout: 2_000, interval: 20 });
      expect((await rpc(url, 'eth_call', [warmCall, 'latest'])).result).toBe('0x');
      expect((await rpc(url, 'eth_estimateGas', [warmCall, 'latest'])).result).toBe('0x5208');
      expect(waiting).toBe(calls.length);
      for (const r of await Promise.all(answers)) {
        expect(r.error.code).toBe(-32000);
        expect(r.error.message).toContain(`fork upstream ${proxy.url} failed`);
      }
    } finally {
      // The next tests need a live upstream whatever happened here.
      await Promise.allSettled(answers);
      await proxy.control({ mode: 'pass' });
    }
    expect((await rpc(url, 'eth_call', [{ to: cold(20), data: '0x' }, 'latest'])).result).toBe('0x');
    expect((await rpc(url, 'eth_estimateGas', [{ from: funded, to: cold(30), value: '0x1' }, 'latest'])).result).toBe('0x5208');
    const listed = await rpc(url, 'eth_createAccessList', [{ from: funded, to: cold(32), data: '0x' }, 'latest']);
    expect(listed.error).toBeUndefined();
    expect(listed.result.gasUsed).toBe('0x5208');
    // The send that failed admitted nothing (its first run, cut short, neither); sent again, it is admitted once.
    expect(BigInt((await rpc(url, 'eth_getTransactionCount', [funded, 'pending'])).result)).toBe(nonce);
    const sent = await rpc(url, 'eth_sendTransaction', [{ from: funded, to: cold(31), value: '0x1' }]);
    expect(sent.error).toBeUndefined();
    expect(BigInt((await rpc(url, 'eth_getTransactionCount', [funded, 'pending'])).result)).toBe(nonce + 1n);
    await vi.waitFor(async () => expect((await rpc(url, 'eth_getTransactionReceipt', [sent.result])).result?.status).toBe('0x1'), { timeout: 5_000 });
    expect((await rpc(url, 'eth_getBalance', [cold(31), 'latest'])).result).toBe('0x1');
  });

  it('cold eth_sendTransaction of different senders wait for the upstream together; one sender still takes turns', async () => {
    const url = t.node.url;
    const senders = [1, 2, 3, 4, 5, 6].map((i) => devAccount(i).address.toLowerCase());
    const send = (from: string, i: number) => rpc(url, 'eth_sendTransaction', [{ from, to: cold(40 + i), value: '0x1' }]);
    await proxy.control({ mode: 'stall' });
    await proxy.reset();
    const answers = senders.map((from, i) => send(from, i));
    try {
      // Each send's estimate asks for one trace first. Taking turns, the second would reach
      // the upstream only once the first had given up (its trace and reads: ~4 s here),
      // and within 2 s only the first one's trace and its retries (3) would be seen.
      await vi.waitFor(async () => expect((await proxy.stats()).methods.debug_traceCall ?? 0).toBeGreaterThanOrEqual(senders.length), {
        timeout: 2_000,
        interval: 20,
      });
      for (const r of await Promise.all(answers)) expect(r.error.code).toBe(-32000);
    } finally {
      await Promise.allSettled(answers);
      await proxy.control({ mode: 'pass' });
    }
    // Nothing was admitted; sent again, concurrently (two of one sender), each is admitted
    // once and one sender's two get consecutive nonces.
    const nonces = await Promise.all(senders.map(async (a) => BigInt((await rpc(url, 'eth_getTransactionCount', [a, 'pending'])).result)));
    const again = await Promise.all([...senders.map((from, i) => send(from, 10 + i)), send(senders[0]!, 20)]);
    for (const r of again) expect(r.error).toBeUndefined();
    const mined = await Promise.all(
      again.map(async (r) => {
        let tx: { from: string; nonce: string; blockNumber: string | null } | null = null;
        await vi.waitFor(
          async () => {
            tx = (await rpc(url, 'eth_getTransactionByHash', [r.result])).result;
            expect(tx?.blockNumber).toBeTruthy();
          },
          { timeout: 5_000 },
        );
        return tx!;
      }),
    );
    senders.forEach((from, i) =>
      expect(
        mined
          .filter((tx) => tx.from === from)
          .map((tx) => BigInt(tx.nonce))
          .sort((a, b) => (a < b ? -1 : 1)),
      ).toEqual(i === 0 ? [nonces[0]!, nonces[0]! + 1n] : [nonces[i]!]),
    );
  });
});

describe('the upstream URL', () => {
  it('takes http(s) and ws(s) URLs (WebSocket: fork-ws.test.ts) and refuses any other scheme at start', () => {
    for (const url of ['http://127.0.0.1:8545', 'https://eth.example/v2/KEY', 'ws://127.0.0.1:8546', 'wss://eth.example/v2/KEY']) {
      expect((parseArgs(['--fork-url', url]) as Config).chain.forkUrl).toBe(new URL(url).href);
    }
    expect(() => parseArgs(['--fork-url', 'ftp://x'])).toThrow(/must be an http\(s\) or ws\(s\) URL/);
    expect(() => parseArgs(['--fork-url', 'not a url'])).toThrow(/must be an http\(s\) or ws\(s\) URL/);
  });
});

describe('the test methods on a fork', () => {
  it('anvil_reset returns to the fork block and the upstream state', async () => {
    const forkBlock = BigInt((await rpc(anvil.url, 'eth_blockNumber')).result);
    const target = cold(9);
    expect((await rpc(t.node.url, 'anvil_setBalance', [target, '0x1234'])).error).toBeUndefined();
    expect((await rpc(t.node.url, 'eth_getBalance', [target, 'pending'])).result).toBe('0x1234');
    await vi.waitFor(async () => expect(BigInt((await rpc(t.node.url, 'eth_blockNumber')).result)).toBeGreaterThan(forkBlock + 3n), { timeout: 5_000 });
    expect((await rpc(t.node.url, 'anvil_reset', [])).error).toBeUndefined();
    // Back at the fork block (the builder may have sealed one block since).
    expect(BigInt((await rpc(t.node.url, 'eth_blockNumber')).result)).toBeLessThanOrEqual(forkBlock + 1n);
    const upstreamHash = (await rpc(anvil.url, 'eth_getBlockByNumber', [`0x${forkBlock.toString(16)}`, false])).result.hash;
    expect((await rpc(t.node.url, 'eth_getBlockByNumber', [`0x${forkBlock.toString(16)}`, false])).result.hash).toBe(upstreamHash);
    expect((await rpc(t.node.url, 'eth_getBalance', [target, 'latest'])).result).toBe('0x0');
    expect((await rpc(t.node.url, 'eth_getBalance', [funded, 'latest'])).result).toBe('0x21e19e0c9bab2400000');
    // The upstream never saw the local write.
    expect((await rpc(anvil.url, 'eth_getBalance', [target, 'latest'])).result).toBe('0x0');
  });
});
