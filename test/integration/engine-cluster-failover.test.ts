// Sequencer mode on a cluster (three nodes, --cluster, on a three-server NATS cluster, each
// with the Engine API and a flashblocks endpoint): the test plays op-node and op-conductor.
// op-node starts block 1 on the leader, a transfer is pre-confirmed in it, and the leader is
// killed mid-block. op-conductor hands sequencing to the new leader, whose op-node sends the
// same attributes (the same payload id): the block goes on as pre-confirmed, never opened
// anew, every flashblock of it on every endpoint carries op-node's payload id with indices
// that never go back, and getPayload seals it with the transfer. Tokens are signed by
// test/helpers/engine.ts.

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keccak256, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ClusterNodes } from '../helpers/cluster-nodes.js';
import { devChainAttributes, devChainL1Info, engineClient } from '../helpers/engine.js';
import { devAccount } from '../helpers/node.js';
import { caughtUp, call, sameChain } from '../helpers/replicas.js';
import { signTransfer } from '../helpers/transfer.js';
import { waitFor } from '../helpers/wait.js';

const TRANSFER_TO = '0x000000000000000000000000000000000000bEEF' as Hex;
const ZERO = `0x${'00'.repeat(32)}` as Hex;

interface Flashblock {
  payload_id: Hex;
  index: number;
  diff: { transactions: Hex[] };
  metadata: { block_number: number };
}

let c: ClusterNodes;
let dir: string;
let secretFile: string;
let l1Info: Hex[];
const engineUrls: string[] = [];
const listeners: Flashblock[][] = [[], [], []];
const sockets: WebSocket[] = [];

const portIn = (i: number, component: string) =>
  waitFor(() => new RegExp(`"component":"${component}"[^\\n]*"port":(\\d+)`).exec(c.node(i).output())?.[1], 10_000, `node ${i}'s ${component} port`);

beforeAll(async () => {
  l1Info = await devChainL1Info(3);
  dir = mkdtempSync(join(tmpdir(), 'preconf-engine-cluster-'));
  secretFile = join(dir, 'jwt.hex');
  writeFileSync(secretFile, randomBytes(32).toString('hex'));
  c = await ClusterNodes.start({
    nodes: 3,
    leaseMs: 2000,
    args: ['--optimism', '--preconf-interval-ms', '100', '--authrpc.port', '0', '--authrpc.jwtsecret', secretFile, '--flashblocks.port', '0'],
  });
  await c.leader(30_000);
  for (const i of [0, 1, 2]) {
    engineUrls[i] = `http://127.0.0.1:${await portIn(i, 'engine')}`;
    const s = new WebSocket(`ws://127.0.0.1:${await portIn(i, 'flashblocks')}/`);
    s.on('message', (d: Buffer) => listeners[i]!.push(JSON.parse(d.toString('utf8')) as Flashblock));
    await new Promise((resolve, reject) => s.once('open', resolve).once('error', reject));
    sockets.push(s);
  }
}, 120_000);

afterAll(async () => {
  for (const s of sockets) s.close();
  await c?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('sequencer mode across a leader change (op-conductor hands sequencing over)', () => {
  it("the new leader continues op-node's block as pre-confirmed and seals it under the same payload id", async () => {
    const old = await c.leader(30_000);
    const genesis = await call(c.url(old), 'eth_getBlockByNumber', ['latest', false]);
    const state = { headBlockHash: genesis.hash, safeBlockHash: genesis.hash, finalizedBlockHash: genesis.hash };
    const attributes = devChainAttributes(genesis, [l1Info[0]!]);
    const started = await engineClient(engineUrls[old]!, secretFile)('engine_forkchoiceUpdatedV3', [state, attributes]);
    expect(started.error).toBeUndefined();
    const id = started.result.payloadId as Hex;

    const chainId = Number(await call<string>(c.url(old), 'eth_chainId'));
    const hash = await call<Hex>(c.url(old), 'eth_sendRawTransaction', [await signTransfer(devAccount(1), { to: TRANSFER_TO, nonce: 0, chainId })]);
    const others = [0, 1, 2].filter((i) => i !== old);
    for (const i of others) {
      await waitFor(
        async () => (await call(c.url(i), 'eth_getBlockByNumber', ['pending', false])).transactions.includes(hash),
        20_000,
        `node ${i} shows the transfer`,
      );
    }

    await c.node(old).kill('SIGKILL');
    const leader = await c.leader(30_000, c.running());
    // The promise holds through the takeover: the new leader shows the block as it was.
    expect((await call(c.url(leader), 'eth_getBlockByNumber', ['pending', false])).transactions).toEqual([keccak256(l1Info[0]!), hash]);

    // op-conductor makes the new leader's op-node the sequencer; it derives the same attributes.
    const engine = engineClient(engineUrls[leader]!, secretFile);
    const again = await engine('engine_forkchoiceUpdatedV3', [state, attributes]);
    expect(again.error).toBeUndefined();
    expect(again.result.payloadStatus.status).toBe('VALID');
    expect(again.result.payloadId).toBe(id);
    // Continued, not opened anew: the transfer is still pre-confirmed right after.
    expect((await call(c.url(leader), 'eth_getBlockByNumber', ['pending', false])).transactions).toEqual([keccak256(l1Info[0]!), hash]);

    const got = await engine('engine_getPayloadV4', [id]);
    expect(got.error).toBeUndefined();
    const payload = got.result.executionPayload;
    expect((payload.transactions as Hex[]).map((raw) => keccak256(raw))).toEqual([keccak256(l1Info[0]!), hash]);
    expect((await call(c.url(leader), 'eth_getBlockByNumber', ['latest', false])).hash).toBe(payload.blockHash);
    const replica = others.find((i) => i !== leader)!;
    await caughtUp(c.url(leader), c.url(replica), 20_000);
    await sameChain(c.url(leader), c.url(replica), 1);

    // Every endpoint that ran throughout named the block with op-node's id, and its
    // pre-confirmations never went back (a block opened anew would start at 0 again).
    for (const i of others) {
      const of = listeners[i]!.filter((m) => m.metadata.block_number === 1);
      expect(of.length).toBeGreaterThan(0);
      expect(new Set(of.map((m) => m.payload_id))).toEqual(new Set([id]));
      const indices = of.map((m) => m.index);
      expect(indices).toEqual([...new Set(indices)].sort((x, y) => x - y));
      expect(of.flatMap((m) => m.diff.transactions)).toEqual(payload.transactions);
    }
  });

  it('op-node takes an unsafe block back: the replica takes it off too, and the next leader builds its transfer', async () => {
    const leader = await c.leader(30_000, c.running());
    const replica = c.running().find((i) => i !== leader)!;
    const engine = engineClient(engineUrls[leader]!, secretFile);
    const block1 = await call(c.url(leader), 'eth_getBlockByNumber', ['latest', false]);
    const on1 = { headBlockHash: block1.hash, safeBlockHash: ZERO, finalizedBlockHash: ZERO };

    // Block 2 with a transfer in it, sealed and followed.
    const chainId = Number(await call<string>(c.url(leader), 'eth_chainId'));
    const transfer = await call<Hex>(c.url(leader), 'eth_sendRawTransaction', [await signTransfer(devAccount(2), { to: TRANSFER_TO, nonce: 0, chainId })]);
    const started = await engine('engine_forkchoiceUpdatedV3', [on1, devChainAttributes(block1, [l1Info[1]!])]);
    expect(started.error).toBeUndefined();
    await waitFor(
      async () => (await call(c.url(leader), 'eth_getBlockByNumber', ['pending', false])).transactions.includes(transfer),
      20_000,
      'the transfer pre-confirmed',
    );
    const block2 = (await engine('engine_getPayloadV4', [started.result.payloadId])).result.executionPayload;
    expect((block2.transactions as Hex[]).map((raw) => keccak256(raw))).toEqual([keccak256(l1Info[1]!), transfer]);
    await caughtUp(c.url(leader), c.url(replica), 20_000);
    expect((await call(c.url(replica), 'eth_getTransactionReceipt', [transfer])).blockHash).toBe(block2.blockHash);

    // Derivation replaces it: a forkchoice back to block 1 with other attributes, the pool left out.
    const replaced = await engine('engine_forkchoiceUpdatedV3', [on1, devChainAttributes(block1, [l1Info[1]!], true)]);
    expect(replaced.error).toBeUndefined();
    expect(replaced.result.payloadStatus.status).toBe('VALID');
    const got = await engine('engine_getPayloadV4', [replaced.result.payloadId]);
    expect(got.error).toBeUndefined();
    const sibling = got.result.executionPayload;
    // Built exactly from the attributes (noTxPool): op-node then hands it to the node as
    // every block, and the forkchoice makes it the head (the ledger gets it first).
    const np = await engine('engine_newPayloadV4', [sibling, [], got.result.parentBeaconBlockRoot, []]);
    expect(np.result.status).toBe('VALID');
    const onSibling = { headBlockHash: sibling.blockHash, safeBlockHash: ZERO, finalizedBlockHash: ZERO };
    expect((await engine('engine_forkchoiceUpdatedV3', [onSibling, null])).result.payloadStatus.status).toBe('VALID');
    expect(sibling.blockHash).not.toBe(block2.blockHash);
    expect(sibling.parentHash).toBe(block1.hash);
    await waitFor(
      async () => (await call(c.url(replica), 'eth_getBlockByNumber', ['0x2', false]))?.hash === sibling.blockHash,
      20_000,
      'the replica on the sibling',
    );
    await sameChain(c.url(leader), c.url(replica), 2);
    expect(await call(c.url(replica), 'eth_getTransactionReceipt', [transfer])).toBeNull();
    // Pooled again on the replica, as on the leader: the promise is kept across the next takeover.
    expect((await call(c.url(replica), 'eth_getTransactionByHash', [transfer])).blockNumber).toBeNull();

    await c.node(leader).kill('SIGKILL');
    const next = await c.leader(30_000, c.running());
    expect(next).toBe(replica);
    const nextEngine = engineClient(engineUrls[next]!, secretFile);
    const head = await call(c.url(next), 'eth_getBlockByNumber', ['latest', false]);
    expect(head.hash).toBe(sibling.blockHash);
    const block3 = await nextEngine('engine_forkchoiceUpdatedV3', [onSibling, devChainAttributes(head, [l1Info[2]!])]);
    expect(block3.error).toBeUndefined();
    await waitFor(
      async () => (await call(c.url(next), 'eth_getBlockByNumber', ['pending', false])).transactions.includes(transfer),
      20_000,
      "the transfer in the new leader's block",
    );
    const sealed = (await nextEngine('engine_getPayloadV4', [block3.result.payloadId])).result.executionPayload;
    expect((sealed.transactions as Hex[]).map((raw) => keccak256(raw))).toEqual([keccak256(l1Info[2]!), transfer]);
  });
});
