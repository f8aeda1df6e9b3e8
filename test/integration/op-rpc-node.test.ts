// An OP Stack RPC node as Base runs them: it builds nothing, its canonical blocks come from
// its own op-node through the Engine API (newPayload, then a forkchoice update), and its
// pending block from the sequencer's flashblocks (--flashblocks-url), executed again on its
// head. The sequencer is the OP dev chain in sequencer mode (blocks only from the Engine
// API) with its flashblocks endpoint. The test plays both op-nodes.

import { mkdtempSync, rmSync } from 'node:fs';
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
        extra(c);
      },
    });
    const client = engineClient(t.node.engine!.url, secretFile);
    if (name === 'sequencer') seqEngine = client;
    else followerEngine = client;
    return t;
  }

  /** One block: op-node starts it on the sequencer, a transfer is sent to the sequencer, the
   *  follower shows it pending from the flashblocks; then getPayload, and the follower's
   *  op-node gives it the block (newPayload, forkchoice). */
  async function oneBlock(n: number, sender: number) {
    const head = (await block(sequencer, 'latest'))!;
    expect(Number(head.number)).toBe(n - 1);
    const attributes = devChainAttributes(head, [l1Info[n - 1]!]);
    const fc = { headBlockHash: head.hash, safeBlockHash: head.hash, finalizedBlockHash: head.hash };
    const started = await seqEngine('engine_forkchoiceUpdatedV3', [fc, attributes]);
    expect(started.error).toBeUndefined();
    const id = started.result.payloadId as Hex;

    const hash = await sequencer.wallet(sender).sendTransaction({ chain: sequencer.chain, account: devAccount(sender), to: TO, value: parseEther('0.001') });
    // Pending on the follower: its own execution of the sequencer's flashblocks.
    const pending = await waitFor(
      async () => {
        const b = await block(follower, 'pending');
        return b?.transactions.includes(hash) ? b : null;
      },
      10_000,
      `the transfer of block ${n} in the follower's pending block`,
    );
    expect(Number(pending.number)).toBe(n);
    expect(pending.transactions[0]).toBe(keccak256(l1Info[n - 1]!));
    const receipt = (await rpc(follower.node.url, 'eth_getTransactionReceipt', [hash])).result;
    expect(receipt?.status).toBe('0x1');
    expect(Number(receipt?.blockNumber)).toBe(n);
    expect(BigInt((await rpc(follower.node.url, 'eth_getBalance', [TO, 'pending'])).result)).toBe(parseEther('0.001') * BigInt(n));
    // The follower's latest has not moved: only op-node moves it.
    expect(Number((await block(follower, 'latest'))!.number)).toBe(n - 1);

    const got = await seqEngine('engine_getPayloadV4', [id]);
    expect(got.error).toBeUndefined();
    const payload = got.result.executionPayload;
    expect((payload.transactions as Hex[]).map((raw) => keccak256(raw))).toContain(hash);
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

  beforeAll(async () => {
    l1Info = await devChainL1Info(2);
    dir = mkdtempSync(join(tmpdir(), 'preconf-op-rpc-node-'));
    sequencer = await start('sequencer', ['--flashblocks.addr', '127.0.0.1', '--flashblocks.port', '0']);
    follower = await start('follower', [
      '--no-build',
      '--flashblocks-url',
      `${sequencer.node.flashblocksUrl}/brotli`,
      '--flashblocks.stale-after',
      '2000',
      '--preconf-receipts',
    ]);
  }, 60_000);
  afterAll(async () => {
    await follower?.stop();
    await sequencer?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('starts from the same genesis as the sequencer', async () => {
    expect((await block(follower, 'latest'))!.hash).toBe((await block(sequencer, 'latest'))!.hash);
  });

  it('serves the flashblocks as pending and promotes them when op-node gives it the block, block after block', async () => {
    await oneBlock(1, 1);
    await oneBlock(2, 2);
  });
});
