// A fork whose upstream speaks WebSocket: anvil's own ws:// endpoint, and the counting
// proxy's. The node answers as over HTTP (one message per batch), fails the same way when
// the upstream stalls or rate-limits, and reconnects after the upstream died and came back.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnvil, type Anvil } from '../helpers/anvil.js';
import { startForkNode } from '../helpers/fork.js';
import { rpc, type TestNode } from '../helpers/node.js';
import { startUpstreamProxy, type UpstreamProxy } from '../helpers/upstream-proxy.js';

let anvil: Anvil;
let proxy: UpstreamProxy;
let direct: TestNode;
let proxied: TestNode;
let forkBlock: string;

const holder = '0x00000000000000000000000000000000000a11ce';
const reader = '0x000000000000000000000000000000000000c0de';
// Returns slot 0: PUSH0 SLOAD PUSH0 MSTORE PUSH1 32 PUSH0 RETURN.
const readerCode = '0x5f545f5260205ff3';
const slot0 = `0x${'0'.repeat(62)}2a`;
const cold = (i: number) => `0x${(0x5eb_0000 + i).toString(16).padStart(40, '0')}`;

beforeAll(async () => {
  anvil = await startAnvil();
  await rpc(anvil.url, 'anvil_setBalance', [holder, '0x1234']);
  await rpc(anvil.url, 'anvil_setCode', [reader, readerCode]);
  await rpc(anvil.url, 'anvil_setStorageAt', [reader, '0x0', slot0]);
  await rpc(anvil.url, 'evm_mine', []);
  forkBlock = (await rpc(anvil.url, 'eth_blockNumber')).result;
  proxy = await startUpstreamProxy(anvil.url);
  [direct, proxied] = await Promise.all([startForkNode(anvil.url.replace('http://', 'ws://')), startForkNode(proxy.wsUrl)]);
}, 60_000);

afterAll(async () => {
  await Promise.all([direct?.stop(), proxied?.stop()]);
  await proxy?.stop();
  await anvil?.stop();
});

describe('a WebSocket upstream', () => {
  it("answers as the upstream at the fork block over anvil's own ws:// endpoint", async () => {
    const url = direct.node.url;
    expect((await rpc(url, 'eth_chainId')).result).toBe('0x7a69');
    expect((await rpc(url, 'eth_getBalance', [holder, 'latest'])).result).toBe('0x1234');
    expect((await rpc(url, 'eth_getCode', [reader, 'latest'])).result).toBe(readerCode);
    expect((await rpc(url, 'eth_getStorageAt', [reader, '0x0', 'latest'])).result).toBe(slot0);
    expect((await rpc(url, 'eth_call', [{ to: reader, data: '0x' }, 'latest'])).result).toBe(slot0);
    const upstreamBlock = (await rpc(anvil.url, 'eth_getBlockByNumber', [forkBlock, false])).result;
    expect((await rpc(url, 'eth_getBlockByNumber', [forkBlock, false])).result.hash).toBe(upstreamBlock.hash);
  });

  it('sends an account as one batch in one message', async () => {
    await proxy.reset();
    expect((await rpc(proxied.node.url, 'eth_getBalance', [holder, 'latest'])).result).toBe('0x1234');
    const stats = await proxy.stats();
    expect(stats.requests).toBe(1);
    expect(stats.methods).toEqual({ eth_getBalance: 1, eth_getTransactionCount: 1, eth_getCode: 1 });
  });

  it('a stalled upstream times out with an error naming it, 429s are retried, and reads recover', async () => {
    const url = proxied.node.url;
    await proxy.control({ mode: 'stall' });
    const stalled = await rpc(url, 'eth_getBalance', [cold(1), 'latest']);
    expect(stalled.error.code).toBe(-32000);
    expect(stalled.error.message).toBe(`fork upstream ${proxy.wsUrl} failed: no answer within 400 ms (after 3 attempts)`);

    await proxy.control({ mode: 'pass', fail: 2 });
    await proxy.reset();
    expect((await rpc(url, 'eth_getBalance', [cold(1), 'latest'])).result).toBe('0x0');
    expect((await proxy.stats()).requests).toBe(3);

    await proxy.control({ mode: '429' });
    const limited = await rpc(url, 'eth_getCode', [cold(2), 'latest']);
    expect(limited.error.message).toMatch(new RegExp(`^fork upstream ${proxy.wsUrl} failed: rate limited .* after 3 attempts$`));
    await proxy.control({ mode: 'pass' });
    expect((await rpc(url, 'eth_getCode', [cold(2), 'latest'])).result).toBe('0x');
  });

  it('an upstream that died gives a transport error; once it is back, the node reconnects', async () => {
    const url = proxied.node.url;
    const port = proxy.port;
    await proxy.stop();
    const gone = await rpc(url, 'eth_getBalance', [cold(3), 'latest']);
    expect(gone.error.code).toBe(-32000);
    expect(gone.error.message).toMatch(new RegExp(`^fork upstream ws://127\\.0\\.0\\.1:${port} failed: .+ \\(after 3 attempts\\)$`));
    proxy = await startUpstreamProxy(anvil.url, 0, port);
    expect((await rpc(url, 'eth_getBalance', [cold(3), 'latest'])).result).toBe('0x0');
    expect((await rpc(url, 'eth_call', [{ to: reader, data: '0x' }, 'latest'])).result).toBe(slot0);
    expect((await proxy.stats()).requests).toBeGreaterThanOrEqual(1);
  });
});
