// A sequencer-mode node (builder running, blocks only from the Engine API) whose head op-node
// moves to blocks it did not build: two such nodes on the OP dev chain, the test playing each
// one's op-node. Node B takes node A's block 1 through newPayload and a forkchoice (a standby
// sequencer following the active one); A builds block 2 with a pool transaction in it, B
// builds a sibling block 2 from other attributes, and derivation's choice of B's block moves
// A's head onto it: A's block is taken off, its transaction goes back to A's pool and is built
// into A's next block. Then a forkchoice back to an earlier block rewinds A, with `logs`
// subscribers told. Tokens are signed by test/helpers/engine.ts.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keccak256, parseEther, toHex, type Hex } from 'viem';
import { serializeTransaction } from 'viem/op-stack';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseArgs } from '../../src/cli/index.js';
import { devChainAttributes, devChainL1Info, engineClient, type EngineAnswer } from '../helpers/engine.js';
import { devAccount, rpc, startTestNode, type TestNode } from '../helpers/node.js';
import { RawWs } from '../helpers/ws.js';

const ZERO = `0x${'00'.repeat(32)}` as Hex;
const TRANSFER_TO = '0x000000000000000000000000000000000000bEEF' as Hex;

interface Block {
  number: Hex;
  hash: Hex;
  parentHash: Hex;
  timestamp: Hex;
  gasLimit: Hex;
  transactions: Hex[];
}

interface Sequencer {
  t: TestNode;
  engine: (method: string, params: unknown[]) => Promise<EngineAnswer>;
}

/** A user deposit whose init code emits one log (LOG0 of nothing) and leaves no code. */
function loggingDeposit(seed: string): Hex {
  return serializeTransaction({
    type: 'deposit',
    sourceHash: keccak256(toHex(seed)),
    from: '0x00000000000000000000000000000000000a11ce',
    mint: 0n,
    value: 0n,
    gas: 200_000n,
    isSystemTx: false,
    data: '0x60006000a000', // PUSH1 0, PUSH1 0, LOG0, STOP
  });
}

describe('sequencer mode: the head moved by op-node to blocks the builder did not build', () => {
  let dir: string;
  let a: Sequencer;
  let b: Sequencer;
  let l1Info: Hex[];

  async function start(name: string): Promise<Sequencer> {
    const secretFile = join(dir, `${name}.jwt.hex`);
    const flags = parseArgs(['--optimism', '--authrpc.port', '0', '--authrpc.jwtsecret', secretFile]);
    if (flags === 'help') throw new Error('help');
    const t = await startTestNode({
      configure: (c) => {
        Object.assign(c.chain, { ...flags.chain, datadir: undefined, preconfIntervalMs: 50, blockTimeMs: 400 });
        c.engine = { ...flags.engine!, port: 0 };
      },
    });
    return { t, engine: engineClient(t.node.engine!.url, secretFile) };
  }

  const block = async (s: Sequencer, tag: string): Promise<Block> => (await rpc(s.t.node.url, 'eth_getBlockByNumber', [tag, false])).result;
  const head = (hash: Hex) => ({ headBlockHash: hash, safeBlockHash: ZERO, finalizedBlockHash: ZERO });

  /** op-node's round on a sequencer: attributes on `parent`, getPayload; the payload. */
  async function build(s: Sequencer, parent: Block, transactions: Hex[], noTxPool: boolean, before?: () => Promise<void>) {
    const fcu = await s.engine('engine_forkchoiceUpdatedV3', [head(parent.hash), devChainAttributes(parent, transactions, noTxPool)]);
    expect(fcu.error).toBeUndefined();
    expect(fcu.result.payloadStatus.status).toBe('VALID');
    await before?.();
    const got = await s.engine('engine_getPayloadV4', [fcu.result.payloadId]);
    expect(got.error).toBeUndefined();
    return { ...got.result.executionPayload, beaconRoot: got.result.parentBeaconBlockRoot as Hex };
  }

  /** newPayload then a forkchoice to it, as op-node hands a block to its execution client. */
  async function adopt(s: Sequencer, payload: any) {
    const { beaconRoot, ...executionPayload } = payload;
    const np = await s.engine('engine_newPayloadV4', [executionPayload, [], beaconRoot, []]);
    expect(np.error).toBeUndefined();
    expect(np.result.status).toBe('VALID');
    const fcu = await s.engine('engine_forkchoiceUpdatedV3', [head(payload.blockHash), null]);
    expect(fcu.error).toBeUndefined();
    expect(fcu.result.payloadStatus.status).toBe('VALID');
  }

  beforeAll(async () => {
    l1Info = await devChainL1Info(4);
    dir = mkdtempSync(join(tmpdir(), 'preconf-sequencer-reorg-'));
    [a, b] = await Promise.all([start('a'), start('b')]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.t.stop(), b?.t.stop()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  let block1: any;
  let aBlock2: any;
  let sentOnA: Hex;

  it("takes another sequencer's block as its head (newPayload, forkchoice) and builds on it", async () => {
    const genesis = await block(a, 'latest');
    expect((await block(b, 'latest')).hash).toBe(genesis.hash);
    block1 = await build(a, genesis, [l1Info[0]!], false);
    await adopt(a, block1);
    expect((await block(a, 'latest')).hash).toBe(block1.blockHash);

    await adopt(b, block1);
    const onB = await block(b, 'latest');
    expect(onB.hash).toBe(block1.blockHash);
    expect(onB.transactions).toEqual([keccak256(l1Info[0]!)]);
    // B's builder goes on from there when op-node asks.
    const next = await build(b, onB, [l1Info[1]!], true);
    expect(next.parentHash).toBe(block1.blockHash);
  });

  it("moves onto a sibling block (derivation's choice): its own block is taken off and that block's pool transaction is built again", async () => {
    const h1 = await block(a, 'latest');
    sentOnA = await a.t.wallet(1).sendTransaction({ chain: a.t.chain, account: devAccount(1), to: TRANSFER_TO, value: parseEther('0.5') });
    aBlock2 = await build(a, h1, [l1Info[1]!], false, async () => {
      await vi.waitFor(async () => expect((await block(a, 'pending')).transactions).toContain(sentOnA), { timeout: 10_000, interval: 20 });
    });
    expect((aBlock2.transactions as Hex[]).map((raw) => keccak256(raw))).toEqual([keccak256(l1Info[1]!), sentOnA]);
    await adopt(a, aBlock2);
    expect((await rpc(a.t.node.url, 'eth_getTransactionReceipt', [sentOnA])).result.blockHash).toBe(aBlock2.blockHash);

    // The sibling: the same L1 info, other attributes (prevRandao, timestamp), no pool.
    const bBlock2 = await build(b, await block(b, 'latest'), [l1Info[1]!], true);
    expect(bBlock2.blockHash).not.toBe(aBlock2.blockHash);
    await adopt(b, bBlock2);

    await adopt(a, bBlock2);
    const latest = await block(a, 'latest');
    expect(latest.hash).toBe(bBlock2.blockHash);
    expect((await block(a, '0x2')).hash).toBe(bBlock2.blockHash);
    // Taken off with A's block 2, the transaction is pooled again, not lost.
    expect((await rpc(a.t.node.url, 'eth_getTransactionReceipt', [sentOnA])).result).toBeNull();
    const pooled = (await rpc(a.t.node.url, 'eth_getTransactionByHash', [sentOnA])).result;
    expect(pooled.hash).toBe(sentOnA);
    expect(pooled.blockNumber).toBeNull();

    // A's builder builds on the new head, the transaction in it.
    const block3 = await build(a, latest, [l1Info[2]!], false, async () => {
      await vi.waitFor(async () => expect((await block(a, 'pending')).transactions).toContain(sentOnA), { timeout: 10_000, interval: 20 });
    });
    expect(block3.parentHash).toBe(bBlock2.blockHash);
    expect((block3.transactions as Hex[]).map((raw) => keccak256(raw))).toEqual([keccak256(l1Info[2]!), sentOnA]);
    await adopt(a, block3);
    expect((await rpc(a.t.node.url, 'eth_getTransactionReceipt', [sentOnA])).result.blockHash).toBe(block3.blockHash);
  });

  it('rewinds to an earlier block: subscribers get the logs taken off as removed, and the builder goes on from there', async () => {
    const ws = await RawWs.open(a.t.node.wsUrl);
    try {
      const sub = await ws.request('eth_subscribe', ['logs', {}]);
      const subscription = sub.result as string;
      const h3 = await block(a, 'latest');
      const logged = loggingDeposit('a log in block 4');
      const block4 = await build(a, h3, [l1Info[3]!, logged], false);
      await adopt(a, block4);
      await ws.waitFor(subscription, (n) => n.transactionHash === keccak256(logged) && !n.removed);

      // Back to block 2: blocks 3 and 4 go.
      const fcu = await a.engine('engine_forkchoiceUpdatedV3', [head(h3.parentHash), null]);
      expect(fcu.error).toBeUndefined();
      expect(fcu.result.payloadStatus.status).toBe('VALID');
      expect((await block(a, 'latest')).hash).toBe(h3.parentHash);
      expect((await rpc(a.t.node.url, 'eth_getBlockByNumber', ['0x4', false])).result).toBeNull();
      await ws.waitFor(subscription, (n) => n.transactionHash === keccak256(logged) && n.removed === true);
      // block 3's transaction is pooled again; the builder builds on block 2.
      const again = await build(a, await block(a, 'latest'), [l1Info[2]!], false, async () => {
        await vi.waitFor(async () => expect((await block(a, 'pending')).transactions).toContain(sentOnA), { timeout: 10_000, interval: 20 });
      });
      expect(again.parentHash).toBe(h3.parentHash);
      expect(again.blockNumber).toBe('0x3');
      await adopt(a, again);
    } finally {
      await ws.close();
    }
  });

  it('a refused forkchoice leaves the block being built as it was', async () => {
    const h = await block(a, 'latest');
    const sent = await a.t.wallet(2).sendTransaction({ chain: a.t.chain, account: devAccount(2), to: TRANSFER_TO, value: 1n });
    const fcu = await a.engine('engine_forkchoiceUpdatedV3', [head(h.hash), devChainAttributes(h, [l1Info[3]!])]);
    expect(fcu.error).toBeUndefined();
    await vi.waitFor(async () => expect((await block(a, 'pending')).transactions).toContain(sent), { timeout: 10_000, interval: 20 });
    // A rewind to block 1 naming a finalized block that is not on its chain: -38002, nothing moves.
    const refused = await a.engine('engine_forkchoiceUpdatedV3', [{ headBlockHash: block1.blockHash, safeBlockHash: ZERO, finalizedBlockHash: h.hash }, null]);
    expect(refused.error?.code).toBe(-38002);
    expect((await block(a, 'latest')).hash).toBe(h.hash);
    expect((await block(a, 'pending')).transactions).toContain(sent);
    const got = await a.engine('engine_getPayloadV4', [fcu.result.payloadId]);
    expect(got.error).toBeUndefined();
    expect((got.result.executionPayload.transactions as Hex[]).map((raw) => keccak256(raw))).toEqual([keccak256(l1Info[3]!), sent]);
  });
});
