// engine_newPayload and forkchoice moving the head, played as op-node plays them over the
// authenticated port: two nodes on Base mainnet's genesis (`--no-build`), a "sequencer" that
// builds each block from payload attributes (forkchoiceUpdated → getPayload → newPayload →
// forkchoiceUpdated) and a follower given the same payloads (newPayload → forkchoiceUpdated).
// Block 1 is Base's; later blocks carry Base's L1-info deposit with a new source hash (a
// deposit of their own). Then: a tampered block, an unknown parent, safe and finalized, an
// unsafe reorg onto a sibling, which both nodes rewind to, and what `logs` subscribers are
// told of a reorg (the dropped block's logs as removed, as geth tells them).

import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { createPublicClient, fromRlp, keccak256, pad, parseAbiItem, toHex, toRlp, webSocket, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rpc, startTestNode, type TestNode } from '../helpers/node.js';
import { waitFor } from '../helpers/wait.js';
import { RawWs } from '../helpers/ws.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/op');
const BLOCK_1 = JSON.parse(readFileSync(join(FIXTURES, 'base-mainnet-block-1/block.json'), 'utf8'));
const EXPECTED = JSON.parse(readFileSync(join(FIXTURES, 'base-mainnet-block-1/expected.json'), 'utf8'));
const GENESIS_HASH = '0xf712aa9241cc24369b143cf6dce85f0902a9731e70d66818a3a5845b296c73dd';
const ZERO = `0x${'00'.repeat(32)}`;

function token(secret: Buffer): string {
  const part = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  const signed = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ iat: Math.floor(Date.now() / 1000) })}`;
  return `${signed}.${createHmac('sha256', secret).update(signed).digest('base64url')}`;
}

/** Base's block-1 L1-info deposit with another source hash: a distinct deposit. */
function deposit(seed: number): Hex {
  const fields = fromRlp(`0x${BLOCK_1.transactions[0].slice(4)}`) as Hex[];
  fields[0] = keccak256(`0x${seed.toString(16).padStart(64, '0')}`);
  return `0x7e${toRlp(fields).slice(2)}`;
}

const MARKED = parseAbiItem('event Marked(uint256 indexed tag)');
const MARKED_TOPIC = keccak256(toHex('Marked(uint256)'));
const tagTopic = (tag: number): Hex => pad(toHex(tag));

/** A user deposit (nothing minted) creating a contract whose init code emits
 *  `Marked(tag)` and leaves no code: a log in a block made of deposits only. */
function mark(seed: number, tag: number): Hex {
  const init: Hex = `0x7f${tagTopic(tag).slice(2)}7f${MARKED_TOPIC.slice(2)}60006000a200`; // PUSH32 tag, PUSH32 topic0, 0, 0, LOG2, STOP
  const sourceHash = keccak256(`0x${(0x10000 + seed).toString(16).padStart(64, '0')}`);
  return `0x7e${toRlp([sourceHash, `0x${'be'.repeat(20)}`, '0x', '0x', '0x', q(toHex(200_000)), '0x', init]).slice(2)}`;
}

/** An RLP quantity: minimal big-endian bytes (zero is empty). */
const q = (hex: string): Hex => {
  const n = BigInt(hex);
  if (n === 0n) return '0x';
  const s = n.toString(16);
  return `0x${s.length % 2 ? '0' : ''}${s}`;
};

/** The hash of a Bedrock-era (London-shaped) block whose header is `block` (an
 *  eth_getBlockByHash answer) with `over` applied. */
function blockHash(block: any, over: Record<string, string>): Hex {
  const h = { ...block, ...over };
  return keccak256(
    toRlp([
      h.parentHash,
      h.sha3Uncles,
      h.miner,
      h.stateRoot,
      h.transactionsRoot,
      h.receiptsRoot,
      h.logsBloom,
      q(h.difficulty),
      q(h.number),
      q(h.gasLimit),
      q(h.gasUsed),
      q(h.timestamp),
      h.extraData,
      h.mixHash,
      h.nonce,
      q(h.baseFeePerGas),
    ]),
  );
}

interface Engine {
  node: TestNode;
  call(method: string, params: unknown[]): Promise<{ result?: any; error?: { code: number; message: string } }>;
}

describe('Engine API: newPayload and forkchoice', () => {
  let dir: string;
  let sequencer: Engine;
  let follower: Engine;
  const payloads: any[] = [];
  /** Block 3 as derivation replaced it (the rewind test's sibling). */
  let replaced3: any;

  async function start(name: string): Promise<Engine> {
    const genesis = join(dir, 'base-genesis.json');
    const secretFile = join(dir, `${name}.jwt.hex`);
    const node = await startTestNode({
      configure: (c) => {
        c.chain.genesisFile = genesis;
        c.chain.rollupConfig = join(FIXTURES, 'chain-configs/base-mainnet.toml');
        c.chain.build = false;
        c.engine = { addr: '127.0.0.1', port: 0, jwtSecret: secretFile };
      },
    });
    const secret = Buffer.from(readFileSync(secretFile, 'utf8').trim(), 'hex');
    const url = node.node.engine!.url;
    return {
      node,
      async call(method, params) {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token(secret)}` },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        });
        return (await res.json()) as any;
      },
    };
  }

  const state = (head: string, safe = ZERO, finalized = ZERO) => ({ headBlockHash: head, safeBlockHash: safe, finalizedBlockHash: finalized });
  const attributes = (n: number, over: Record<string, unknown> = {}) => ({
    timestamp: `0x${(Number(BLOCK_1.header.timestamp) + 2 * (n - 1)).toString(16)}`,
    prevRandao: BLOCK_1.header.mixHash,
    suggestedFeeRecipient: BLOCK_1.header.miner,
    transactions: [n === 1 ? BLOCK_1.transactions[0] : deposit(n)],
    noTxPool: true,
    gasLimit: BLOCK_1.header.gasLimit,
    ...over,
  });

  /** op-node's sequencing round on `e`: the payload built on `parent`, then made the head. */
  async function sequence(e: Engine, parent: string, attrs: object, fc: { safe?: string; finalized?: string } = {}) {
    const fcu = await e.call('engine_forkchoiceUpdatedV2', [state(parent, fc.safe, fc.finalized), attrs]);
    expect(fcu.error).toBeUndefined();
    expect(fcu.result.payloadStatus.status).toBe('VALID');
    const got = await e.call('engine_getPayloadV2', [fcu.result.payloadId]);
    const payload = got.result.executionPayload;
    const np = await e.call('engine_newPayloadV2', [payload]);
    expect(np.result).toEqual({ status: 'VALID', latestValidHash: payload.blockHash, validationError: null });
    const head = await e.call('engine_forkchoiceUpdatedV2', [state(payload.blockHash, fc.safe, fc.finalized), null]);
    expect(head.result.payloadStatus).toEqual({ status: 'VALID', latestValidHash: payload.blockHash, validationError: null });
    return payload;
  }

  /** The follower's round: the payload given, then made the head. */
  async function follow(e: Engine, payload: any, fc: { safe?: string; finalized?: string } = {}) {
    const np = await e.call('engine_newPayloadV2', [payload]);
    expect(np.result).toEqual({ status: 'VALID', latestValidHash: payload.blockHash, validationError: null });
    const head = await e.call('engine_forkchoiceUpdatedV2', [state(payload.blockHash, fc.safe, fc.finalized), null]);
    expect(head.result.payloadStatus.status).toBe('VALID');
  }

  const latest = (e: Engine, tag = 'latest') => rpc(e.node.node.url, 'eth_getBlockByNumber', [tag, false]).then((r) => r.result);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'preconf-newpayload-'));
    writeFileSync(join(dir, 'base-genesis.json'), gunzipSync(readFileSync(join(FIXTURES, 'base-mainnet-block-1/genesis.json.gz'))));
    sequencer = await start('sequencer');
    follower = await start('follower');
  });
  afterAll(async () => {
    await sequencer?.node.stop();
    await follower?.node.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("makes Base's block 1 the head: getPayload → newPayload (VALID, then known) → forkchoice", async () => {
    const payload = await sequence(sequencer, GENESIS_HASH, attributes(1));
    expect(payload.blockHash).toBe(EXPECTED.blockHash);
    payloads.push(payload);
    // Sent again (op-node retries): known, VALID without executing.
    const again = await sequencer.call('engine_newPayloadV2', [payload]);
    expect(again.result.status).toBe('VALID');
    expect((await rpc(sequencer.node.node.url, 'eth_blockNumber')).result).toBe('0x1');
    const head = await latest(sequencer);
    expect(head.hash).toBe(EXPECTED.blockHash);
    expect(head.stateRoot).toBe(BLOCK_1.header.stateRoot);
  });

  it('a follower given the same payloads ends on the same head and state', async () => {
    for (let n = 2; n <= 3; n++) payloads.push(await sequence(sequencer, payloads.at(-1).blockHash, attributes(n)));
    for (const p of payloads) await follow(follower, p);
    const [a, b] = [await latest(sequencer), await latest(follower)];
    expect(a.number).toBe('0x3');
    expect(b.hash).toBe(a.hash);
    expect(b.stateRoot).toBe(a.stateRoot);
    // The deposits' sender's nonce, as each node's state has it.
    const from = '0xdeaddeaddeaddeaddeaddeaddeaddeaddead0001';
    const nonce = (e: Engine) => rpc(e.node.node.url, 'eth_getTransactionCount', [from, 'latest']).then((r) => r.result);
    expect(await nonce(follower)).toBe(await nonce(sequencer));
    expect(await nonce(follower)).toBe('0x3');
  });

  it('refuses a tampered block: INVALID with the parent as latest valid hash, or null for a hash that does not match', async () => {
    const block3 = payloads[2];
    const built = (await rpc(sequencer.node.node.url, 'eth_getBlockByHash', [block3.blockHash, false])).result;
    const badRoot = `0x${'11'.repeat(32)}`;
    const tampered = { ...block3, stateRoot: badRoot, blockHash: blockHash(built, { stateRoot: badRoot }) };
    const invalid = await follower.call('engine_newPayloadV2', [tampered]);
    expect(invalid.result.status).toBe('INVALID');
    expect(invalid.result.latestValidHash).toBe(payloads[1].blockHash);
    expect(invalid.result.validationError).toMatch(/invalid stateRoot/);

    const mismatch = await follower.call('engine_newPayloadV2', [{ ...block3, stateRoot: badRoot }]);
    expect(mismatch.result).toEqual({ status: 'INVALID', latestValidHash: null, validationError: expect.stringMatching(/blockhash mismatch/) });
    // The head did not move.
    expect((await latest(follower)).hash).toBe(block3.blockHash);
  });

  it('answers SYNCING for a block whose parent it does not know, and for a forkchoice to an unknown head', async () => {
    const block3 = payloads[2];
    const built = (await rpc(sequencer.node.node.url, 'eth_getBlockByHash', [block3.blockHash, false])).result;
    const parentHash = `0x${'22'.repeat(32)}`;
    const orphan = { ...block3, parentHash, blockHash: blockHash(built, { parentHash }) };
    const np = await follower.call('engine_newPayloadV2', [orphan]);
    expect(np.result).toEqual({ status: 'SYNCING', latestValidHash: null, validationError: null });
    const fcu = await follower.call('engine_forkchoiceUpdatedV2', [state(orphan.blockHash), null]);
    expect(fcu.result.payloadStatus.status).toBe('SYNCING');
  });

  it('checks the version against the fork and the members: -38005 for V3 on a Bedrock payload, -32602 for V2 with blob gas', async () => {
    const p = payloads[0];
    const v3 = await follower.call('engine_newPayloadV3', [{ ...p, blobGasUsed: '0x0', excessBlobGas: '0x0' }, [], ZERO]);
    expect(v3.error?.code).toBe(-38005);
    const v2 = await follower.call('engine_newPayloadV2', [{ ...p, blobGasUsed: '0x0' }]);
    expect(v2.error?.code).toBe(-32602);
  });

  it('moves the safe and finalized tags as the forkchoice names them', async () => {
    const [b1, b2, b3] = payloads;
    for (const e of [sequencer, follower]) {
      const fcu = await e.call('engine_forkchoiceUpdatedV2', [state(b3.blockHash, b2.blockHash, b1.blockHash), null]);
      expect(fcu.result.payloadStatus.status).toBe('VALID');
      expect((await latest(e, 'safe')).hash).toBe(b2.blockHash);
      expect((await latest(e, 'finalized')).hash).toBe(b1.blockHash);
    }
    // A finalized block that is not on the head's chain: -38002.
    const off = await follower.call('engine_forkchoiceUpdatedV2', [state(b1.blockHash, b1.blockHash, b3.blockHash), null]);
    expect(off.error?.code).toBe(-38002);
  });

  it('rewinds the unsafe chain onto a sibling: the dropped block is gone, both nodes agree, newHeads is told', async () => {
    const [b1, b2, b3] = payloads;
    const ws = await RawWs.open(follower.node.node.wsUrl);
    const sub = await ws.request('eth_subscribe', ['newHeads']);
    expect(sub.result).toMatch(/^0x/);
    // Derivation replaces block 3: attributes on block 2 (another fee recipient).
    const sibling = await sequence(sequencer, b2.blockHash, attributes(3, { suggestedFeeRecipient: `0x${'42'.repeat(20)}` }), {
      safe: b2.blockHash,
      finalized: b1.blockHash,
    });
    expect(sibling.blockHash).not.toBe(b3.blockHash);
    replaced3 = sibling;
    expect((await latest(sequencer)).hash).toBe(sibling.blockHash);
    expect((await rpc(sequencer.node.node.url, 'eth_getBlockByHash', [b3.blockHash, false])).result).toBeNull();

    await follow(follower, sibling, { safe: b2.blockHash, finalized: b1.blockHash });
    const [a, b] = [await latest(sequencer), await latest(follower)];
    expect(b.hash).toBe(sibling.blockHash);
    expect(b.number).toBe('0x3');
    expect(b.stateRoot).toBe(a.stateRoot);
    expect(b.miner).toBe(`0x${'42'.repeat(20)}`);
    expect((await rpc(follower.node.node.url, 'eth_getBlockByHash', [b3.blockHash, false])).result).toBeNull();
    await expect.poll(() => ws.notifications.map((n) => n.result.hash)).toContain(sibling.blockHash);
    ws.socket.close();

    // Back to block 2 (an earlier block): block 3 goes, block 2 is latest.
    const back = await follower.call('engine_forkchoiceUpdatedV2', [state(b2.blockHash, b2.blockHash, b1.blockHash), null]);
    expect(back.result.payloadStatus).toEqual({ status: 'VALID', latestValidHash: b2.blockHash, validationError: null });
    expect((await latest(follower)).hash).toBe(b2.blockHash);
    expect((await rpc(follower.node.node.url, 'eth_getBlockByNumber', ['0x3', false])).result).toBeNull();
    // The sibling is kept no more (it was written, then dropped): the sequencer's payload again, VALID.
    await follow(follower, sibling, { safe: b2.blockHash, finalized: b1.blockHash });
    expect((await latest(follower)).hash).toBe(sibling.blockHash);
  });

  it('refuses a rewind below the finalized block (-38002)', async () => {
    const [b1, b2] = payloads;
    const fcu = await follower.call('engine_forkchoiceUpdatedV2', [state(b2.blockHash, b2.blockHash, b2.blockHash), null]);
    expect(fcu.result.payloadStatus.status).toBe('VALID');
    const below = await follower.call('engine_forkchoiceUpdatedV2', [state(b1.blockHash, b1.blockHash, b1.blockHash), null]);
    expect(below.error?.code).toBe(-38002);
    expect((await latest(follower)).number).toBe('0x2');
  });

  it("tells logs subscribers of a reorg as geth does: the dropped block's logs as removed, then the new head's", async () => {
    // The sequencer builds block 4 (on block 3 as replaced), block 5, then derivation's
    // replacement of block 5 (attributes on block 4). Tag 9 logs match no subscription.
    const b4 = await sequence(sequencer, replaced3.blockHash, attributes(4, { transactions: [deposit(4), mark(1, 1), mark(2, 9)] }));
    const b5 = await sequence(sequencer, b4.blockHash, attributes(5, { transactions: [deposit(5), mark(3, 9), mark(4, 2)] }));
    const other = { transactions: [deposit(5), mark(5, 3)], suggestedFeeRecipient: `0x${'43'.repeat(20)}` };
    const b5x = await sequence(sequencer, b4.blockHash, attributes(5, other));

    // The follower (at block 2) takes block 3 as replaced; then it is subscribed to tags 1-3.
    await follow(follower, replaced3);
    const health = async () => ((await (await fetch(`${follower.node.node.url}/health`)).json()) as { subscriptions: number }).subscriptions;
    const ws = await RawWs.open(follower.node.node.wsUrl);
    const filter = { topics: [MARKED_TOPIC, [tagTopic(1), tagTopic(2), tagTopic(3)]] };
    const sub = (await ws.request('eth_subscribe', ['logs', filter])).result as string;
    const before = await health();
    const client = createPublicClient({ transport: webSocket(follower.node.node.wsUrl) });
    const viemLogs: { tag: bigint; blockHash: string; removed: boolean }[] = [];
    const unwatch = client.watchEvent({
      event: MARKED,
      args: { tag: [1n, 2n, 3n] },
      onLogs: (logs) => viemLogs.push(...logs.map((l) => ({ tag: l.args.tag!, blockHash: l.blockHash!, removed: l.removed }))),
    });
    try {
      await waitFor(async () => (await health()) > before, 5_000, "viem's subscription on the server");
      const logs = () => ws.notifications.filter((n) => n.subscription === sub).map((n) => n.result);
      const seen = () => logs().map((l) => ({ tag: Number(BigInt(l.topics[1])), blockHash: l.blockHash, removed: l.removed }));

      await follow(follower, b4);
      await follow(follower, b5);
      // On block 5, the follower is given the sibling and a forkchoice to it.
      await follow(follower, b5x);
      expect((await latest(follower)).hash).toBe(b5x.blockHash);
      const expected = [
        { tag: 1, blockHash: b4.blockHash, removed: false },
        { tag: 2, blockHash: b5.blockHash, removed: false },
        { tag: 2, blockHash: b5.blockHash, removed: true },
        { tag: 3, blockHash: b5x.blockHash, removed: false },
      ];
      await expect.poll(seen, { timeout: 5_000 }).toHaveLength(expected.length);
      expect(seen()).toEqual(expected);
      // The removed log is the one announced before (block, transaction, indices), removed.
      expect(logs()[2]).toEqual({ ...logs()[1], removed: true });
      expect(logs()[2]).toMatchObject({ blockNumber: '0x5', transactionIndex: '0x2', transactionHash: keccak256(b5.transactions[2]) });

      // Back to block 4 (an earlier block): the sibling's log is removed, and block 4 is the
      // head again, announced with its logs as geth's SetCanonical does.
      const back = await follower.call('engine_forkchoiceUpdatedV2', [state(b4.blockHash), null]);
      expect(back.result.payloadStatus.status).toBe('VALID');
      expected.push({ tag: 3, blockHash: b5x.blockHash, removed: true }, { tag: 1, blockHash: b4.blockHash, removed: false });
      await expect.poll(seen, { timeout: 5_000 }).toHaveLength(expected.length);
      expect(seen()).toEqual(expected);
      // viem's client hears the same, removed logs included.
      await expect.poll(() => viemLogs.length, { timeout: 5_000 }).toBe(expected.length);
      expect(viemLogs).toEqual(expected.map((e) => ({ ...e, tag: BigInt(e.tag) })));
    } finally {
      unwatch();
      ws.socket.close();
      await client.transport
        .getRpcClient?.()
        .then((c: { close(): void }) => c.close())
        .catch(() => {});
    }
  });
});
