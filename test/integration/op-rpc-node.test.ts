// An OP Stack RPC node as Base runs them: it builds nothing, its canonical blocks come from
// its own op-node through the Engine API (newPayload, then a forkchoice update), and its
// pending block from the sequencer's flashblocks (--flashblocks-url), executed again on its
// head. The sequencer is the OP dev chain in sequencer mode (blocks only from the Engine
// API) with its flashblocks endpoint. The test plays both op-nodes. The RPC node sends its
// transactions to the sequencer (--rollup.sequencerhttp) and answers a sync send from its
// own pending block. Between them stands op-geth's method set: a proxy that answers
// eth_sendRawTransactionSync as op-geth does (no such method) and passes the rest on.

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keccak256, parseEther, type Hex } from 'viem';
import { parseArgs } from '../../src/cli/index.js';
import { devChainAttributes, devChainL1Info, engineClient, type EngineAnswer } from '../helpers/engine.js';
import { devAccount, rpc, startTestNode, type TestNode } from '../helpers/node.js';
import { parsePrometheus, valueOf } from '../helpers/prometheus.js';
import { waitFor } from '../helpers/wait.js';

const TO = '0x000000000000000000000000000000000000c0de' as Hex;

type Engine = (method: string, params: unknown[]) => Promise<EngineAnswer>;

/** A sequencer as op-geth serves it: eth_sendRawTransactionSync is not a method there. Every
 *  other request goes on to `upstream`; the methods asked are kept, in order. */
async function opGethFront(upstream: string): Promise<{ url: string; asked: string[]; server: Server }> {
  const asked: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const request = JSON.parse(body) as { id: unknown; method: string };
      asked.push(request.method);
      res.setHeader('content-type', 'application/json');
      if (request.method === 'eth_sendRawTransactionSync') {
        const error = { code: -32601, message: 'the method eth_sendRawTransactionSync does not exist/is not available' };
        res.end(JSON.stringify({ jsonrpc: '2.0', id: request.id, error }));
        return;
      }
      const answer = await fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      res.end(await answer.text());
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, asked, server };
}
interface Block {
  number: Hex;
  hash: Hex;
  timestamp: Hex;
  gasLimit: Hex;
  transactions: Hex[];
}

describe('an OP RPC node: canonical blocks from op-node, pending from flashblocks', () => {
  let dir: string;
  let sequencer: TestNode;
  let follower: TestNode;
  let seqEngine: Engine;
  let followerEngine: Engine;
  let l1Info: Hex[];
  let front: Awaited<ReturnType<typeof opGethFront>>;

  const block = async (t: TestNode, tag: string) => (await rpc(t.node.url, 'eth_getBlockByNumber', [tag, false])).result as Block | null;
  const metric = async (t: TestNode, name: string) => valueOf(parsePrometheus(await (await fetch(`${t.node.url}/metrics`)).text()), name);

  async function start(name: string, args: string[], extra: (c: any) => void = () => {}): Promise<TestNode> {
    const secretFile = join(dir, `${name}.jwt.hex`);
    const flags = parseArgs(['--optimism', '--authrpc.port', '0', '--authrpc.jwtsecret', secretFile, ...args]);
    if (flags === 'help') throw new Error('help');
    const t = await startTestNode({
      configure: (c) => {
        Object.assign(c.chain, { ...flags.chain, datadir: undefined, preconfIntervalMs: 100 });
        c.engine = { ...flags.engine!, port: 0 };
        c.flashblocks = flags.flashblocks;
        c.flashblocksFollow = flags.flashblocksFollow;
        c.sequencerHttp = flags.sequencerHttp;
        extra(c);
      },
    });
    const client = engineClient(t.node.engine!.url, secretFile);
    if (name === 'sequencer') seqEngine = client;
    else followerEngine = client;
    return t;
  }

  /** op-node starts block `n` on the sequencer (forkchoice with attributes). */
  async function openBlock(n: number) {
    const head = (await block(sequencer, 'latest'))!;
    expect(Number(head.number)).toBe(n - 1);
    const attributes = devChainAttributes(head, [l1Info[n - 1]!]);
    const fc = { headBlockHash: head.hash, safeBlockHash: head.hash, finalizedBlockHash: head.hash };
    const started = await seqEngine('engine_forkchoiceUpdatedV3', [fc, attributes]);
    expect(started.error).toBeUndefined();
    return { n, head, attributes, id: started.result.payloadId as Hex };
  }

  /** getPayload on the sequencer; the follower's op-node gives it the block (newPayload,
   *  forkchoice), which promotes the block the flashblocks made. */
  async function closeBlock({ n, head, attributes, id }: Awaited<ReturnType<typeof openBlock>>, included: Hex[]) {
    const got = await seqEngine('engine_getPayloadV4', [id]);
    expect(got.error).toBeUndefined();
    const payload = got.result.executionPayload;
    for (const hash of included) expect((payload.transactions as Hex[]).map((raw) => keccak256(raw))).toContain(hash);
    const promotedBefore = await metric(follower, 'preconf_flashblocks_promoted_total');
    const reusedBefore = await metric(follower, 'preconf_flashblocks_reused_total');

    const given = await followerEngine('engine_newPayloadV4', [payload, [], attributes.parentBeaconBlockRoot, []]);
    expect(given.result).toEqual({ status: 'VALID', latestValidHash: payload.blockHash, validationError: null });
    // The follower had executed exactly this block from the flashblocks: newPayload took it
    // as executed there instead of executing it again.
    expect(await metric(follower, 'preconf_flashblocks_reused_total')).toBe(reusedBefore + 1);
    const moved = { headBlockHash: payload.blockHash, safeBlockHash: head.hash, finalizedBlockHash: head.hash };
    expect((await followerEngine('engine_forkchoiceUpdatedV3', [moved, null])).result.payloadStatus.status).toBe('VALID');
    expect((await seqEngine('engine_forkchoiceUpdatedV3', [moved, null])).result.payloadStatus.status).toBe('VALID');

    // The block the flashblocks made is the canonical one: promoted, not a mismatch.
    expect((await block(follower, 'latest'))!.hash).toBe(payload.blockHash);
    await waitFor(async () => (await metric(follower, 'preconf_flashblocks_promoted_total')) > promotedBefore, 5_000, `block ${n} promoted`);
    expect(await metric(follower, 'preconf_flashblocks_mismatches_total')).toBe(0);
    // Between blocks pending is the head, never null.
    expect((await block(follower, 'pending'))?.number).toBeDefined();
  }

  /** Waits until the follower's pending block (its own execution of the flashblocks) holds `hash`. */
  const pendingWith = (hash: Hex, what: string) =>
    waitFor(
      async () => {
        const b = await block(follower, 'pending');
        return b?.transactions.includes(hash) ? b : null;
      },
      10_000,
      what,
    );

  /** A transfer from dev account `sender`, signed with the nonce and fees `t` answers. */
  async function signed(sender: number, t: TestNode = follower): Promise<Hex> {
    const wallet = t.wallet(sender);
    const request = await wallet.prepareTransactionRequest({ chain: t.chain, account: devAccount(sender), to: TO, value: parseEther('0.001') });
    return wallet.signTransaction(request as any);
  }

  /** One block: op-node starts it on the sequencer, a transfer is sent to the sequencer, the
   *  follower shows it pending from the flashblocks; then the block is closed. */
  async function oneBlock(n: number, sender: number) {
    const opened = await openBlock(n);
    const hash = await sequencer.wallet(sender).sendTransaction({ chain: sequencer.chain, account: devAccount(sender), to: TO, value: parseEther('0.001') });
    // Pending on the follower: its own execution of the sequencer's flashblocks.
    const pending = await pendingWith(hash, `the transfer of block ${n} in the follower's pending block`);
    expect(Number(pending.number)).toBe(n);
    expect(pending.transactions[0]).toBe(keccak256(l1Info[n - 1]!));
    const receipt = (await rpc(follower.node.url, 'eth_getTransactionReceipt', [hash])).result;
    expect(receipt?.status).toBe('0x1');
    expect(Number(receipt?.blockNumber)).toBe(n);
    expect(BigInt((await rpc(follower.node.url, 'eth_getBalance', [TO, 'pending'])).result)).toBe(parseEther('0.001') * BigInt(n));
    // The follower's latest has not moved: only op-node moves it.
    expect(Number((await block(follower, 'latest'))!.number)).toBe(n - 1);
    await closeBlock(opened, [hash]);
  }

  beforeAll(async () => {
    l1Info = await devChainL1Info(3);
    dir = mkdtempSync(join(tmpdir(), 'preconf-op-rpc-node-'));
    sequencer = await start('sequencer', ['--flashblocks.addr', '127.0.0.1', '--flashblocks.port', '0', '--preconf-receipts']);
    follower = await start('follower', [
      '--no-build',
      '--flashblocks-url',
      `${sequencer.node.flashblocksUrl}/brotli`,
      '--flashblocks.stale-after',
      '2000',
      '--preconf-receipts',
      '--rollup.sequencerhttp',
      (front = await opGethFront(sequencer.node.url)).url,
    ]);
  }, 60_000);
  afterAll(async () => {
    await follower?.stop();
    await sequencer?.stop();
    if (front) await new Promise((r) => front.server.close(r));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('starts from the same genesis as the sequencer', async () => {
    expect((await block(follower, 'latest'))!.hash).toBe((await block(sequencer, 'latest'))!.hash);
  });

  it('serves the flashblocks as pending and promotes them when op-node gives it the block, block after block', async () => {
    await oneBlock(1, 1);
    await oneBlock(2, 2);
  });

  it('sends transactions to the sequencer and answers a sync send from its own pending block, a receipt already shown counting', async () => {
    // No block open on the sequencer: the transaction waits in its pool, nothing shows here,
    // so the sync send times out with EIP-7966's code and the hash.
    const late = await signed(3);
    const timedOut = await rpc(follower.node.url, 'eth_sendRawTransactionSync', [late, 300]);
    expect(timedOut.error?.code).toBe(4);
    expect(timedOut.error?.data).toBe(keccak256(late));
    // It was sent on: the sequencer's pool has it, this node's (which no one builds from) does not.
    expect((await rpc(sequencer.node.url, 'preconf_transactionStatus', [keccak256(late)])).result.status).toBe('pending');
    expect((await rpc(follower.node.url, 'txpool_status', [])).result).toEqual({ pending: '0x0', queued: '0x0' });

    // A transaction the sequencer's pool already holds (sent to it straight, not yet in a
    // block): it answers "already known", and the sync send waits for the receipt as for one
    // it took.
    const held = await signed(7, sequencer);
    expect((await rpc(sequencer.node.url, 'eth_sendRawTransaction', [held])).error).toBeUndefined();
    const sends = () => front.asked.filter((m) => m === 'eth_sendRawTransaction').length;
    const heldSync = rpc(follower.node.url, 'eth_sendRawTransactionSync', [held, 10_000]);
    await waitFor(async () => sends() === 2, 5_000, 'the held transaction sent on to the sequencer');
    expect((await rpc(sequencer.node.url, 'eth_sendRawTransaction', [held])).error?.message).toBe('already known');

    const opened = await openBlock(3);
    await pendingWith(keccak256(late), 'the timed-out transfer in the pending block once the sequencer builds one');
    const heldReceipt = await heldSync;
    expect(heldReceipt.error).toBeUndefined();
    expect(heldReceipt.result.transactionHash).toBe(keccak256(held));
    expect(Number(heldReceipt.result.blockNumber)).toBe(3);

    // (a) viem's sendRawTransaction to the RPC node: the sequencer takes it, and it comes back
    // through the flashblocks into this node's pending block.
    const sent = await follower.wallet(4).sendRawTransaction({ serializedTransaction: await signed(4) });
    expect(sent).toMatch(/^0x[0-9a-f]{64}$/);
    const pending = await pendingWith(sent, "viem's transfer in the follower's pending block");
    expect(Number(pending.number)).toBe(3);

    // (b) viem's sendRawTransactionSync: the receipt from this node's pending block, the
    // sequencer's receipt of the block it is building.
    const receipt = await follower.wallet(5).sendRawTransactionSync({ serializedTransaction: await signed(5), timeout: 10_000 });
    expect(receipt.status).toBe('success');
    expect(receipt.blockNumber).toBe(3n);
    const fromFollower = (await rpc(follower.node.url, 'eth_getTransactionReceipt', [receipt.transactionHash])).result;
    const fromSequencer = (await rpc(sequencer.node.url, 'eth_getTransactionReceipt', [receipt.transactionHash])).result;
    expect(fromFollower).toEqual(fromSequencer);
    expect(BigInt(fromSequencer.gasUsed)).toBe(receipt.gasUsed);
    expect(BigInt(fromSequencer.transactionIndex)).toBe(BigInt(receipt.transactionIndex));

    // (c) a transaction sent straight to the sequencer, already shown here: a sync send of
    // it answers with that receipt, not the sequencer's "already known".
    const direct = await signed(6, sequencer);
    const hash = (await rpc(sequencer.node.url, 'eth_sendRawTransaction', [direct])).result as Hex;
    await pendingWith(hash, 'the transfer sent to the sequencer in the pending block');
    const again = await rpc(follower.node.url, 'eth_sendRawTransactionSync', [direct]);
    expect(again.error).toBeUndefined();
    expect(again.result).toEqual((await rpc(sequencer.node.url, 'eth_getTransactionReceipt', [hash])).result);
    // The plain send is the sequencer's answer, unchanged.
    // Answered from what this node shows: the sequencer was not asked.
    expect(sends()).toBe(4);
    const refused = await rpc(follower.node.url, 'eth_sendRawTransaction', [direct]);
    expect(refused.error).toBeDefined();
    expect(refused.error).toEqual((await rpc(sequencer.node.url, 'eth_sendRawTransaction', [direct])).error);

    // Only the sends reached the sequencer: the pending nonce was this node's.
    expect(new Set(front.asked)).toEqual(new Set(['eth_sendRawTransaction']));
    await closeBlock(opened, [keccak256(late), keccak256(held), sent, receipt.transactionHash, hash]);
  });

  it('takes --rollup.sequencerhttp only on a node that does not build, nor follows a leader', () => {
    expect(parseArgs(['--no-build', '--rollup.sequencerhttp', 'http://127.0.0.1:8545']) as any).toMatchObject({ sequencerHttp: 'http://127.0.0.1:8545/' });
    expect(() => parseArgs(['--optimism', '--rollup.sequencerhttp', 'http://127.0.0.1:8545'])).toThrow(/--rollup.sequencerhttp needs --no-build/);
    expect(() => parseArgs(['--follow', 'nats://127.0.0.1:4222', '--leader', 'http://a:1', '--rollup.sequencerhttp', 'http://b:1'])).toThrow(
      /excludes --publish, --follow and --cluster/,
    );
    expect(() => parseArgs(['--no-build', '--rollup.sequencerhttp', 'ws://127.0.0.1:8545'])).toThrow(/must be an http\(s\) URL/);
  });

  it('refuses transactions on an RPC node without a sequencer, after checking them; a plain --no-build node pools them', async () => {
    const lone = await startTestNode({
      configure: (c) => {
        Object.assign(c.chain, { optimism: true, build: false });
        c.engine = { addr: '127.0.0.1', port: 0, jwtSecret: join(dir, 'lone.jwt.hex') };
      },
    });
    try {
      const r = await rpc(lone.node.url, 'eth_sendRawTransaction', [await signed(7, lone)]);
      expect(r.error).toEqual({
        code: -32000,
        message:
          'this node does not build blocks (--no-build, its blocks come from op-node) and has no sequencer to send transactions to: start it with --rollup.sequencerhttp URL',
      });
      expect((await rpc(lone.node.url, 'eth_sendRawTransactionSync', [await signed(7, lone)])).error?.message).toMatch(/--rollup.sequencerhttp/);
      expect((await rpc(lone.node.url, 'txpool_status', [])).result).toEqual({ pending: '0x0', queued: '0x0' });
      // A bad transaction gets the pool's answer first (here a wrong chain id).
      const other = await devAccount(7).signTransaction({
        chainId: 1,
        nonce: 0,
        to: TO,
        value: 1n,
        gas: 21000n,
        maxFeePerGas: 10n ** 10n,
        maxPriorityFeePerGas: 1n,
      });
      expect((await rpc(lone.node.url, 'eth_sendRawTransaction', [other])).error?.message).toMatch(/chain id/);
    } finally {
      await lone.stop();
    }
    // A sequencer that cannot be reached is named as the sequencer.
    const cut = await startTestNode({
      configure: (c) => {
        Object.assign(c.chain, { optimism: true, build: false });
        c.sequencerHttp = 'http://127.0.0.1:9/';
      },
    });
    try {
      const raw = await signed(7, cut);
      expect((await rpc(cut.node.url, 'eth_sendRawTransaction', [raw])).error?.message).toMatch(/^cannot reach the sequencer at http:\/\/127\.0\.0\.1:9\//);
      expect((await rpc(cut.node.url, 'eth_sendRawTransactionSync', [raw])).error?.message).toMatch(/^cannot reach the sequencer/);
    } finally {
      await cut.stop();
    }
    // Without op-node or flashblocks (a stored chain served as it is), as a geth that does not mine.
    const plain = await startTestNode({ configure: (c) => void Object.assign(c.chain, { optimism: true, build: false }) });
    try {
      const raw = await signed(7, plain);
      expect((await rpc(plain.node.url, 'eth_sendRawTransaction', [raw])).result).toBe(keccak256(raw));
    } finally {
      await plain.stop();
    }
  });
});
