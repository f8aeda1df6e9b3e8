// GET /metrics: scrape, do known things, scrape again; the figures moved by exactly what
// was done, and the text parses as Prometheus' exposition format. With --threads the
// scrape on any event loop reports the whole node.

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { encodeFunctionData, parseGwei, type Hex } from 'viem';
import { devAccount, rawPost, rpc, startTestNode, type TestNode } from '../helpers/node.js';
import { spawnNode, type NodeProcess } from '../helpers/process.js';
import { RawWs } from '../helpers/ws.js';
import { scrape, valueOf, type Family } from '../helpers/prometheus.js';
import { signTransfer } from '../helpers/transfer.js';

/** Waits (vitest's vi.waitFor) until `probe` holds. */
const until = (what: string, probe: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> =>
  vi.waitFor(
    async () => {
      if (!(await probe())) throw new Error(`timed out waiting for ${what}`);
    },
    { timeout: timeoutMs, interval: 20 },
  );

const transfer = (i: number, nonce: number): Promise<Hex> =>
  signTransfer(devAccount(i), { to: devAccount(9).address, nonce, maxFeePerGas: parseGwei('20'), maxPriorityFeePerGas: parseGwei('1') });

describe('GET /metrics', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode({
      onDisk: true,
      configure: (c) => {
        c.chain.preconfIntervalMs = 50;
        c.chain.blockTimeMs = 500;
        c.server.wsMaxBackpressureBytes = 1024;
      },
    });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('counters and histograms move by exactly the requests, transactions and connections made', async () => {
    const url = t.node.url;
    const first = await scrape(url);
    expect(first.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    const b = first.families;
    const delta = (after: Map<string, Family>, name: string, labels: Record<string, string> = {}) => valueOf(after, name, labels) - valueOf(b, name, labels);

    // JSON-RPC: 5 eth_chainId (3 single, 2 in a batch), 2 failing eth_getBalance, 1 unknown
    // method, 1 eth_call (the calls work queue), 1 synchronous send (pre-confirmed), 1 send
    // behind a nonce gap (stays queued).
    for (let i = 0; i < 3; i++) await rpc(url, 'eth_chainId');
    await rawPost(url, JSON.stringify([1, 2].map((id) => ({ jsonrpc: '2.0', id, method: 'eth_chainId', params: [] }))));
    expect((await rpc(url, 'eth_getBalance', ['0x12', 'latest'])).error.code).toBe(-32602);
    expect((await rpc(url, 'eth_getBalance', [devAccount(0).address, 'nonsense'])).error.code).toBe(-32602);
    expect((await rpc(url, 'no_suchMethod')).error.code).toBe(-32601);
    const data = encodeFunctionData({ abi: [{ type: 'function', name: 'f', inputs: [], outputs: [], stateMutability: 'view' }], functionName: 'f' });
    expect((await rpc(url, 'eth_call', [{ to: devAccount(8).address, data }, 'latest'])).result).toBe('0x');
    const ws = await RawWs.open(t.node.wsUrl);
    const heads = (await ws.request('eth_subscribe', ['newHeads'])).result as string;
    expect((await rpc(url, 'eth_sendRawTransactionSync', [await transfer(1, 0)])).result.status).toBe('0x1');
    expect((await rpc(url, 'eth_sendRawTransaction', [await transfer(2, 1)])).error).toBeUndefined();
    // A seal after the pre-confirmation.
    await ws.waitFor(heads);

    const a = (await scrape(url)).families;
    try {
      expect(delta(a, 'preconf_rpc_requests_total', { method: 'eth_chainId' })).toBe(5);
      expect(delta(a, 'preconf_rpc_errors_total', { method: 'eth_chainId' })).toBe(0);
      expect(delta(a, 'preconf_rpc_requests_total', { method: 'eth_getBalance' })).toBe(2);
      expect(delta(a, 'preconf_rpc_errors_total', { method: 'eth_getBalance' })).toBe(2);
      expect(delta(a, 'preconf_rpc_requests_total', { method: 'other' })).toBe(1);
      expect(delta(a, 'preconf_rpc_errors_total', { method: 'other' })).toBe(1);
      expect(delta(a, 'preconf_rpc_requests_total', { method: 'eth_call' })).toBe(1);
      expect(delta(a, 'preconf_rpc_requests_total', { method: 'eth_subscribe' })).toBe(1);
      expect(delta(a, 'preconf_rpc_requests_total', { method: 'eth_sendRawTransactionSync' })).toBe(1);
      // Latency histograms: one observation per request, in the +Inf bucket too.
      const latency = 'preconf_rpc_request_duration_seconds';
      expect(delta(a, `${latency}_count`, { method: 'eth_chainId' })).toBe(5);
      expect(delta(a, `${latency}_bucket`, { method: 'eth_chainId', le: '+Inf' })).toBe(5);
      expect(delta(a, `${latency}_sum`, { method: 'eth_sendRawTransactionSync' })).toBeGreaterThan(0);
      // The addon's figures.
      expect(delta(a, 'preconf_work_completed_total', { class: 'calls' })).toBe(1);
      expect(delta(a, 'preconf_work_completed_total', { class: 'submit' })).toBe(2);
      expect(valueOf(a, 'preconf_work_queue_capacity', { class: 'calls' })).toBe(1024);
      expect(delta(a, 'preconf_builder_preconf_transactions_sum')).toBe(1);
      expect(delta(a, 'preconf_builder_tick_duration_seconds_count')).toBeGreaterThan(0);
      // One delay per pre-confirmation on the clock (the scrape may fall between the two).
      const ticks = valueOf(a, 'preconf_builder_tick_duration_seconds_count');
      expect(Math.abs(valueOf(a, 'preconf_builder_tick_delay_seconds_count') - ticks)).toBeLessThanOrEqual(1);
      expect(delta(a, 'preconf_builder_tick_delay_seconds_count')).toBeGreaterThan(0);
      expect(delta(a, 'preconf_builder_seal_duration_seconds_count')).toBeGreaterThan(0);
      // Every sealed block is committed, at most one still in flight.
      const [seals, commits] = [valueOf(a, 'preconf_builder_seal_duration_seconds_count'), valueOf(a, 'preconf_store_commit_duration_seconds_count')];
      expect(commits).toBeGreaterThanOrEqual(seals - 1);
      expect(commits).toBeLessThanOrEqual(seals);
      expect(valueOf(a, 'preconf_pool_transactions', { state: 'pending' })).toBe(0);
      expect(valueOf(a, 'preconf_pool_transactions', { state: 'queued' })).toBe(1);
      expect(valueOf(a, 'preconf_store_size_bytes')).toBeGreaterThan(0);
      expect(valueOf(a, 'preconf_head_block')).toBe(Number.parseInt((await rpc(url, 'eth_blockNumber')).result, 16));
      // This loop's WebSocket figures.
      expect(valueOf(a, 'preconf_ws_connections')).toBe(1);
      expect(valueOf(a, 'preconf_ws_subscriptions', { kind: 'newHeads' })).toBe(1);
      expect(valueOf(a, 'preconf_event_loops_reporting')).toBe(1);
      expect(a.get('process_cpu_user_seconds_total')?.type).toBe('counter');
    } finally {
      ws.close();
    }
    await until('the connection to close', async () => valueOf((await scrape(url)).families, 'preconf_ws_connections') === 0);
  });

  it('a subscriber that stops reading is dropped and counted', async () => {
    const url = t.node.url;
    const before = valueOf((await scrape(url)).families, 'preconf_ws_slow_subscribers_dropped_total');
    const slow = await RawWs.open(t.node.wsUrl);
    try {
      for (let i = 0; i < 50; i++) await slow.request('eth_subscribe', ['newFlashblocks']);
      (slow.socket as unknown as { _socket: { pause(): void } })._socket.pause();
      await until(
        'the slow subscriber to be dropped',
        async () => valueOf((await scrape(url)).families, 'preconf_ws_slow_subscribers_dropped_total') === before + 1,
      );
      expect(valueOf((await scrape(url)).families, 'preconf_ws_connections')).toBe(0);
    } finally {
      slow.socket.terminate();
    }
  });
});

describe('GET /metrics with --threads 2', () => {
  let node: NodeProcess | undefined;
  afterAll(async () => {
    if (node && node.child.exitCode === null) {
      node.child.kill('SIGTERM');
      await node.exited;
    }
  });

  it('every scrape, on whichever loop it lands, reports the whole node', async () => {
    node = await spawnNode(['--ephemeral', '--threads', '2']);
    const body = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';
    // Fresh connections: the kernel spreads them over both loops.
    for (let i = 0; i < 20; i++) {
      const r = await fetch(node.url, { method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' }, body });
      expect(r.status).toBe(200);
      await r.text();
    }
    const ws = await RawWs.open(node.url.replace('http', 'ws'));
    try {
      await ws.request('eth_subscribe', ['newHeads']);
      for (let i = 0; i < 8; i++) {
        const { families } = await scrape(node.url);
        expect(valueOf(families, 'preconf_event_loops_reporting')).toBe(2);
        expect(valueOf(families, 'preconf_rpc_requests_total', { method: 'eth_chainId' })).toBe(20);
        expect(valueOf(families, 'preconf_rpc_request_duration_seconds_count', { method: 'eth_chainId' })).toBe(20);
        expect(valueOf(families, 'preconf_ws_connections')).toBe(1);
        expect(valueOf(families, 'preconf_ws_subscriptions', { kind: 'newHeads' })).toBe(1);
        // Per-process figures appear once, not once per loop.
        expect(families.get('preconf_builder_tick_duration_seconds')?.samples.filter((s) => s.name.endsWith('_count'))).toHaveLength(1);
      }
      // Without a pool journal a submission is answered on the event loop, not queued for
      // a submit thread (the on-disk node above counts its two).
      const sent = await rpc(node.url, 'eth_sendRawTransaction', [await transfer(3, 0)]);
      expect(sent.result).toMatch(/^0x[0-9a-f]{64}$/);
      const afterSend = (await scrape(node.url)).families;
      expect(valueOf(afterSend, 'preconf_work_completed_total', { class: 'submit' })).toBe(0);
      expect((await rpc(node.url, 'eth_getTransactionByHash', [sent.result])).result.hash).toBe(sent.result);
      // In memory, the store reports the memory it holds: a dev chain's few blocks, in chunks of 256 KiB.
      const storeBytes = valueOf((await scrape(node.url)).families, 'preconf_store_size_bytes');
      expect(storeBytes).toBeGreaterThan(0);
      expect(storeBytes % (256 * 1024)).toBe(0);
      expect(storeBytes).toBeLessThan(64 << 20);
    } finally {
      ws.close();
    }
  });
});
