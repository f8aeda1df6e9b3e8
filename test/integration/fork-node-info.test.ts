// What a fork says about itself: anvil_nodeInfo's forkConfig and anvil_metadata's
// forkedNetwork, against a real `anvil --fork-url` of the same upstream, at start and after
// anvil_reset with forking parameters. A URL that may carry a key (credentials, a path, a
// query) is shown without it here, where anvil shows it verbatim.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnvil, type Anvil } from '../helpers/anvil.js';
import { startForkNode } from '../helpers/fork.js';
import { rpc, type TestNode } from '../helpers/node.js';

let upstream: Anvil;
let reference: Anvil;
let t: TestNode;

const hex = (n: number) => `0x${n.toString(16)}`;

/** The fork fields of `url`'s anvil_nodeInfo and anvil_metadata. */
async function forkFields(url: string): Promise<{ forkConfig: unknown; forkedNetwork: unknown }> {
  const info = await rpc(url, 'anvil_nodeInfo');
  const metadata = await rpc(url, 'anvil_metadata');
  expect(info.error).toBeUndefined();
  expect(metadata.error).toBeUndefined();
  return { forkConfig: info.result.forkConfig, forkedNetwork: metadata.result.forkedNetwork };
}

async function reset(url: string, forking?: Record<string, unknown>): Promise<void> {
  const r = await rpc(url, 'anvil_reset', forking ? [{ forking }] : []);
  expect(r.error).toBeUndefined();
}

const upstreamHash = async (n: number) => (await rpc(upstream.url, 'eth_getBlockByNumber', [hex(n), false])).result.hash as string;

beforeAll(async () => {
  upstream = await startAnvil();
  expect((await rpc(upstream.url, 'anvil_mine', ['0x6'])).error).toBeUndefined();
  // The node's fork helper sets a 20 ms backoff: anvil is given the same.
  [reference, t] = await Promise.all([
    startAnvil(['--fork-url', upstream.url, '--fork-block-number', '3', '--fork-retry-backoff', '20']),
    startForkNode(upstream.url, { blockNumber: 3n }),
  ]);
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await Promise.all([reference?.stop(), upstream?.stop()]);
});

describe('anvil_nodeInfo and anvil_metadata on a fork', () => {
  it('name the upstream, the fork block and the backoff as anvil does', async () => {
    const mine = await forkFields(t.node.url);
    expect(mine).toEqual(await forkFields(reference.url));
    expect(mine).toEqual({
      forkConfig: { forkUrl: upstream.url, forkBlockNumber: 3, forkRetryBackoff: 20 },
      forkedNetwork: { chainId: 31337, forkBlockNumber: 3, forkBlockHash: await upstreamHash(3) },
    });
  });

  it('follow anvil_reset with forking parameters; a URL with a key is shown without it', async () => {
    // Another block and a URL carrying a key in its query (anvil answers on any query).
    const keyed = `${upstream.url}/?apikey=SECRET`;
    await Promise.all([reset(t.node.url, { jsonRpcUrl: keyed, blockNumber: 4 }), reset(reference.url, { jsonRpcUrl: keyed, blockNumber: 4 })]);
    const forkedNetwork = { chainId: 31337, forkBlockNumber: 4, forkBlockHash: await upstreamHash(4) };
    const theirs = await forkFields(reference.url);
    expect(theirs).toEqual({ forkConfig: { forkUrl: keyed, forkBlockNumber: 4, forkRetryBackoff: 20 }, forkedNetwork });
    const mine = await forkFields(t.node.url);
    expect(mine).toEqual({ forkConfig: { forkUrl: upstream.url, forkBlockNumber: 4, forkRetryBackoff: 20 }, forkedNetwork });
    expect(JSON.stringify(mine)).not.toContain('SECRET');

    // Only a block: the same upstream, as anvil keeps it.
    await Promise.all([reset(t.node.url, { blockNumber: 5 }), reset(reference.url, { blockNumber: 5 })]);
    const at5 = { chainId: 31337, forkBlockNumber: 5, forkBlockHash: await upstreamHash(5) };
    expect((await forkFields(reference.url)).forkedNetwork).toEqual(at5);
    expect(await forkFields(t.node.url)).toEqual({
      forkConfig: { forkUrl: upstream.url, forkBlockNumber: 5, forkRetryBackoff: 20 },
      forkedNetwork: at5,
    });

    // Only a URL: that upstream's latest block.
    await Promise.all([reset(t.node.url, { jsonRpcUrl: upstream.url }), reset(reference.url, { jsonRpcUrl: upstream.url })]);
    const latest = { chainId: 31337, forkBlockNumber: 6, forkBlockHash: await upstreamHash(6) };
    expect(await forkFields(t.node.url)).toEqual(await forkFields(reference.url));
    expect((await forkFields(t.node.url)).forkedNetwork).toEqual(latest);
  });

  it('a reset without parameters stays on the fork here, where anvil leaves it', async () => {
    await Promise.all([reset(t.node.url), reset(reference.url)]);
    expect(await forkFields(reference.url)).toEqual({
      forkConfig: { forkUrl: null, forkBlockNumber: null, forkRetryBackoff: null },
      forkedNetwork: null,
    });
    expect(await forkFields(t.node.url)).toEqual({
      forkConfig: { forkUrl: upstream.url, forkBlockNumber: 6, forkRetryBackoff: 20 },
      forkedNetwork: { chainId: 31337, forkBlockNumber: 6, forkBlockHash: await upstreamHash(6) },
    });
  });
});
