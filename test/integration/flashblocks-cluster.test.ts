// Flashblocks across a leader change: three nodes (--cluster) on a three-server NATS cluster,
// each with its flashblocks endpoint. The leader is killed mid-block; the new leader
// continues that block without an `Opened`. Its endpoint must publish every block from
// then on completely: the block it took over (continued or started over as a new payload at
// index 0) and the next ones, each adding up to the sealed block.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, defineChain, http, keccak256, type Hex } from 'viem';
import WebSocket from 'ws';
import { ClusterNodes, headOf } from '../helpers/cluster-nodes.js';
import { devAccount } from '../helpers/node.js';
import { call } from '../helpers/replicas.js';
import { waitFor } from '../helpers/wait.js';

interface Flashblock {
  payload_id: Hex;
  index: number;
  diff: { block_hash: Hex; transactions: Hex[] };
  metadata: { block_number: number };
}

let c: ClusterNodes;
const listeners: Flashblock[][] = [];
const sockets: WebSocket[] = [];
let sending = true;

beforeAll(async () => {
  c = await ClusterNodes.start({ nodes: 3, leaseMs: 2000, args: ['--block-time-ms', '1000', '--flashblocks.port', '0'] });
  await c.leader(30_000);
  for (const i of [0, 1, 2]) {
    const port = await waitFor(() => /"component":"flashblocks"[^\n]*"port":(\d+)/.exec(c.node(i).output())?.[1], 10_000, `node ${i}'s flashblocks port`);
    const s = new WebSocket(`ws://127.0.0.1:${port}/`);
    listeners[i] = [];
    s.on('message', (d: Buffer) => listeners[i]!.push(JSON.parse(d.toString('utf8')) as Flashblock));
    await new Promise((resolve, reject) => s.once('open', resolve).once('error', reject));
    sockets.push(s);
  }
}, 120_000);

afterAll(async () => {
  sending = false;
  for (const s of sockets) s.close();
  await c?.stop();
});

describe('flashblocks across a leader change', () => {
  it("the new leader's endpoint publishes every block from the takeover on, each complete", async () => {
    const old = await c.leader(30_000);
    const follower = [0, 1, 2].find((i) => i !== old)!;
    const url = c.url(follower);
    const chain = defineChain({
      id: Number(await call(url, 'eth_chainId')),
      name: 'dev',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [url] } },
    });
    const wallet = createWalletClient({ chain, transport: http(url), account: devAccount(1) });
    // A transfer every 150 ms to a follower (it forwards to whoever leads), across the kill.
    const load = (async () => {
      let nonce = Number(await call(url, 'eth_getTransactionCount', [devAccount(1).address, 'pending']));
      while (sending) {
        await wallet.sendTransaction({ to: '0x000000000000000000000000000000000000bEEF', value: 1n, nonce, gas: 21_000n }).then(
          () => nonce++,
          () => {},
        );
        await new Promise((r) => setTimeout(r, 150));
      }
    })();
    await waitFor(async () => (await headOf(url)) >= 3, 20_000, 'a few blocks');
    // The block open when the leader dies: the old leader built part of it, the new one the rest.
    const taken = (await headOf(url)) + 1;
    await c.node(old).kill('SIGKILL');
    const running = c.running();
    const leader = await c.leader(30_000, running);
    await waitFor(async () => (await headOf(c.url(leader))) >= taken + 2, 30_000, 'two blocks after the takeover');
    sending = false;
    await load;
    for (let n = taken; n <= taken + 2; n++) {
      const block = await call(c.url(leader), 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false]);
      const of = () => listeners[leader]!.filter((m) => m.metadata.block_number === n);
      await waitFor(() => of().at(-1)?.diff.block_hash === block.hash, 10_000, `the new leader's last flashblock of block ${n}`);
      const last = of().at(-1)!.payload_id;
      const payload = of().filter((m) => m.payload_id === last);
      expect(
        payload.map((m) => m.index),
        `block ${n}`,
      ).toEqual(payload.map((_, i) => i));
      expect(
        payload.flatMap((m) => m.diff.transactions).map((tx) => keccak256(tx)),
        `block ${n}`,
      ).toEqual(block.transactions);
    }
  }, 120_000);
});
