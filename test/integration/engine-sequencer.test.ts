// Sequencer mode: the test plays op-node against the OP dev chain with the Engine API on
// (`--optimism --authrpc.port 0`). A forkchoice update with attributes (the L1-info deposit
// as the dev chain builds it, a user deposit) and `noTxPool: false` starts the block in the
// builder; pool transactions sent by a viem client are pre-confirmed in it every interval
// (pending reads, the flashblocks endpoint under the Engine API's payload id); nothing is
// sealed until getPayload, which returns the block exactly as last pre-confirmed, and that
// block is then the chain's latest. On Base mainnet's registry genesis (Regolith at genesis,
// every later fork after it) the same mode builds Base's block 1 from its attributes exactly.
// Tokens are signed by test/helpers/engine.ts.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { keccak256, parseEther, toHex, type Hex } from 'viem';
import { serializeTransaction } from 'viem/op-stack';
import WebSocket from 'ws';
import { parseArgs } from '../../src/cli/index.js';
import { devChainAttributes, devChainL1Info, engineClient, type EngineAnswer } from '../helpers/engine.js';
import { devAccount, rpc, startTestNode, type TestNode } from '../helpers/node.js';
import { caughtUp, Cluster, call, sameChain } from '../helpers/replicas.js';
import { signTransfer } from '../helpers/transfer.js';

const DEPOSIT_TO = '0x00000000000000000000000000000000000d3905' as Hex;
const DEPOSIT_FROM = '0x00000000000000000000000000000000000a11ce' as Hex;
const TRANSFER_TO = '0x000000000000000000000000000000000000bEEF' as Hex;
const BASE_FIXTURES = join(import.meta.dirname, '../fixtures/op');

interface Flashblock {
  payload_id: Hex;
  index: number;
  diff: { block_hash: Hex; transactions: Hex[] };
  metadata: { block_number: number };
}

describe('Engine API sequencer mode (noTxPool: false)', () => {
  let dir: string;
  let t: TestNode;
  let l1Info: Hex[];
  const flashblocks: Flashblock[] = [];
  let socket: WebSocket;

  let engine: (method: string, params: unknown[]) => Promise<EngineAnswer>;

  const userDeposit = serializeTransaction({
    type: 'deposit',
    sourceHash: keccak256(toHex('a user deposit of this test')),
    from: DEPOSIT_FROM,
    to: DEPOSIT_TO,
    mint: parseEther('2'),
    value: parseEther('1.5'),
    gas: 100_000n,
    isSystemTx: false,
    data: '0x',
  });

  /** forkchoiceUpdatedV3 with attributes on `head`: the payload id. */
  const startBlock = async (head: { hash: Hex; timestamp: Hex; gasLimit: Hex }, transactions: Hex[], noTxPool = false) => {
    const state = { headBlockHash: head.hash, safeBlockHash: head.hash, finalizedBlockHash: head.hash };
    const fcu = await engine('engine_forkchoiceUpdatedV3', [state, devChainAttributes(head, transactions, noTxPool)]);
    expect(fcu.error).toBeUndefined();
    expect(fcu.result.payloadStatus.status).toBe('VALID');
    return fcu.result.payloadId as Hex;
  };

  const block = async (tag: string) =>
    (await rpc(t.node.url, 'eth_getBlockByNumber', [tag, false])).result as { number: Hex; hash: Hex; timestamp: Hex; gasLimit: Hex; transactions: Hex[] };

  beforeAll(async () => {
    l1Info = await devChainL1Info(2);
    dir = mkdtempSync(join(tmpdir(), 'preconf-sequencer-'));
    const secretFile = join(dir, 'jwt.hex');
    const flags = parseArgs([
      '--optimism',
      '--authrpc.port',
      '0',
      '--authrpc.jwtsecret',
      secretFile,
      '--flashblocks.addr',
      '127.0.0.1',
      '--flashblocks.port',
      '0',
    ]);
    if (flags === 'help') throw new Error('help');
    t = await startTestNode({
      configure: (c) => {
        // A 400 ms block time: the node's own clock would have sealed several blocks while
        // the test waits for pre-confirmations.
        Object.assign(c.chain, { ...flags.chain, datadir: undefined, preconfIntervalMs: 100, blockTimeMs: 400 });
        c.engine = { ...flags.engine!, port: 0 };
        c.flashblocks = flags.flashblocks;
      },
    });
    engine = engineClient(t.node.engine!.url, secretFile);
    socket = new WebSocket(`${t.node.flashblocksUrl}/`);
    socket.on('message', (data: Buffer) => flashblocks.push(JSON.parse(data.toString('utf8')) as Flashblock));
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  });
  afterAll(async () => {
    socket?.close();
    await t?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('builds from the attributes and the pool, pre-confirms until getPayload, and seals exactly what was pre-confirmed', async () => {
    const genesis = await block('latest');
    expect(genesis.number).toBe('0x0');
    // Nothing is pending beyond the head before op-node starts a block.
    expect((await block('pending')).number).toBe('0x0');

    const id = await startBlock(genesis, [l1Info[0]!, userDeposit]);
    expect(id).toMatch(/^0x03[0-9a-f]{14}$/);
    // Started: the deposits are pre-confirmed at once.
    const opened = await block('pending');
    expect(opened.number).toBe('0x1');
    expect(opened.transactions).toEqual([keccak256(l1Info[0]!), keccak256(userDeposit)]);

    const sent: Hex[] = [];
    for (let i = 0; i < 3; i++) {
      sent.push(
        await t.wallet(1 + i).sendTransaction({ chain: t.chain, account: devAccount(1 + i), to: TRANSFER_TO, value: parseEther('0.01') * BigInt(i + 1) }),
      );
    }
    await vi.waitFor(async () => expect((await block('pending')).transactions).toEqual(expect.arrayContaining(sent)), { timeout: 10_000, interval: 20 });
    // Pre-confirmations go on every interval (ten of them span 2.5 block times of the
    // node's own clock), and no block is sealed meanwhile.
    await vi.waitFor(() => expect(flashblocks.filter((f) => f.metadata.block_number === 1).length).toBeGreaterThanOrEqual(10), {
      timeout: 10_000,
      interval: 20,
    });
    expect((await block('latest')).number).toBe('0x0');
    expect(await t.publicClient.getBalance({ address: DEPOSIT_TO, blockTag: 'pending' })).toBe(parseEther('1.5'));

    const shown = (await block('pending')).transactions;
    const got = await engine('engine_getPayloadV4', [id]);
    expect(got.error).toBeUndefined();
    const payload = got.result.executionPayload;
    expect(got.result.executionRequests).toEqual([]);
    expect(payload.blockNumber).toBe('0x1');
    expect(payload.parentHash).toBe(genesis.hash);
    // The deposits in order, then exactly the pool transactions that were pre-confirmed.
    const hashes = (payload.transactions as Hex[]).map((raw) => keccak256(raw));
    expect(hashes.slice(0, 2)).toEqual([keccak256(l1Info[0]!), keccak256(userDeposit)]);
    expect(hashes).toEqual(shown);
    expect(hashes.slice(2).sort()).toEqual([...sent].sort());

    // Sealed into the chain: the block op-node got is the latest, nothing is pending beyond it.
    const latest = await block('latest');
    expect(latest.hash).toBe(payload.blockHash);
    expect(latest.transactions).toEqual(hashes);
    expect((await block('pending')).number).toBe('0x1');
    const receipt = await t.publicClient.getTransactionReceipt({ hash: sent[0]! });
    expect(receipt.blockHash).toBe(payload.blockHash);

    // The flashblocks carry the Engine API's payload id, and the last one is the block.
    const ofBlock = flashblocks.filter((f) => f.metadata.block_number === 1);
    expect(new Set(ofBlock.map((f) => f.payload_id))).toEqual(new Set([id]));
    expect(ofBlock.map((f) => f.index)).toEqual(ofBlock.map((_, i) => i));
    await vi.waitFor(() => expect(flashblocks.filter((f) => f.metadata.block_number === 1).at(-1)!.diff.block_hash).toBe(payload.blockHash));
    expect(flashblocks.filter((f) => f.metadata.block_number === 1).flatMap((f) => f.diff.transactions)).toEqual(payload.transactions);

    // getPayload again: the same block (op-node may retry).
    const again = await engine('engine_getPayloadV4', [id]);
    expect(again.result.executionPayload.blockHash).toBe(payload.blockHash);
  });

  it('waits between blocks: a transaction sent after the seal stays pooled until the next forkchoice update, then is built in', async () => {
    const head = await block('latest');
    expect(head.number).toBe('0x1');
    const hash = await t.wallet(4).sendTransaction({ chain: t.chain, account: devAccount(4), to: TRANSFER_TO, value: 1n });
    const pooled = (await rpc(t.node.url, 'eth_getTransactionByHash', [hash])).result as { blockNumber: Hex | null };
    expect(pooled.blockNumber).toBeNull();
    expect((await block('pending')).number).toBe('0x1');

    const id = await startBlock(head, [l1Info[1]!]);
    await vi.waitFor(async () => expect((await block('pending')).transactions).toContain(hash), { timeout: 10_000, interval: 20 });
    expect((await block('latest')).number).toBe('0x1');
    const got = await engine('engine_getPayloadV4', [id]);
    expect(got.error).toBeUndefined();
    expect((got.result.executionPayload.transactions as Hex[]).map((raw) => keccak256(raw))).toEqual([keccak256(l1Info[1]!), hash]);
    expect((await block('latest')).hash).toBe(got.result.executionPayload.blockHash);
  });

  it('builds exactly the attributes with noTxPool: true, leaving the pool alone', async () => {
    const head = await block('latest');
    const hash = await t.wallet(5).sendTransaction({ chain: t.chain, account: devAccount(5), to: TRANSFER_TO, value: 1n });
    const id = await startBlock(head, [userDeposit], true);
    const got = await engine('engine_getPayloadV4', [id]);
    expect(got.error).toBeUndefined();
    expect(got.result.executionPayload.transactions).toEqual([userDeposit]);
    // Not sealed into the chain here (newPayload does that), and the pool still holds it.
    expect((await block('latest')).hash).toBe(head.hash);
    expect(((await rpc(t.node.url, 'eth_getTransactionByHash', [hash])).result as { blockNumber: Hex | null }).blockNumber).toBeNull();
  });
});

/** A free loopback port (the spawned leader's Engine API port must be known beforehand). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('sequencer mode with a replica (--publish leader, --follow replica)', () => {
  let c: Cluster;
  let dir: string;
  let engineUrl: string;
  let l1Info: Hex[];

  const engine = (method: string, params: unknown[]) => engineClient(engineUrl, join(dir, 'jwt.hex'))(method, params);

  beforeAll(async () => {
    l1Info = await devChainL1Info(2);
    dir = mkdtempSync(join(tmpdir(), 'preconf-sequencer-cluster-'));
    const port = await freePort();
    engineUrl = `http://127.0.0.1:${port}`;
    c = await Cluster.start({
      replicas: 1,
      chainArgs: ['--optimism', '--preconf-interval-ms', '100', '--block-time-ms', '400'],
      leaderArgs: ['--authrpc.port', String(port), '--authrpc.jwtsecret', join(dir, 'jwt.hex')],
    });
  }, 120_000);
  afterAll(async () => {
    await c?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("follows the blocks op-node drives: the replica shows the leader's pre-confirmations, then the sealed block", async () => {
    const leader = c.leader.url;
    const replica = c.replica(0).url;
    const genesis = await call(leader, 'eth_getBlockByNumber', ['latest', false]);
    expect(genesis.number).toBe('0x0');
    const state = { headBlockHash: genesis.hash, safeBlockHash: genesis.hash, finalizedBlockHash: genesis.hash };
    const attributes = devChainAttributes(genesis, [l1Info[0]!]);
    const fcu = await engine('engine_forkchoiceUpdatedV3', [state, attributes]);
    expect(fcu.error).toBeUndefined();
    const id = fcu.result.payloadId as Hex;

    const chainId = Number(await call<string>(leader, 'eth_chainId'));
    const sender = devAccount(1);
    const hash = await call<Hex>(leader, 'eth_sendRawTransaction', [await signTransfer(sender, { to: TRANSFER_TO, nonce: 0, chainId })]);
    // Pre-confirmed on the leader and, through the stream, on the replica.
    await vi.waitFor(async () => expect((await call(leader, 'eth_getBlockByNumber', ['pending', false])).transactions).toContain(hash), {
      timeout: 20_000,
      interval: 25,
    });
    await vi.waitFor(async () => expect((await call(replica, 'eth_getBlockByNumber', ['pending', false])).transactions).toContain(hash), {
      timeout: 20_000,
      interval: 25,
    });
    expect((await call(leader, 'eth_getBlockByNumber', ['latest', false])).number).toBe('0x0');
    expect((await call(replica, 'eth_getBlockByNumber', ['latest', false])).number).toBe('0x0');

    const got = await engine('engine_getPayloadV4', [id]);
    expect(got.error).toBeUndefined();
    const payload = got.result.executionPayload;
    expect((payload.transactions as Hex[]).map((raw) => keccak256(raw))).toEqual([keccak256(l1Info[0]!), hash]);
    expect((await call(leader, 'eth_getBlockByNumber', ['latest', false])).hash).toBe(payload.blockHash);
    const to = await caughtUp(leader, replica, 20_000);
    expect(to).toBe(1);
    await sameChain(leader, replica, to);
    expect((await call(replica, 'eth_getTransactionReceipt', [hash])).blockHash).toBe(payload.blockHash);

    // op-node takes block 1 back (derivation replaces the unsafe chain): the stream says
    // so, and the replica takes it off as the leader did.
    const back = await engine('engine_forkchoiceUpdatedV3', [state, null]);
    expect(back.error).toBeUndefined();
    expect(back.result.payloadStatus.status).toBe('VALID');
    expect((await call(leader, 'eth_getBlockByNumber', ['latest', false])).hash).toBe(genesis.hash);
    await vi.waitFor(async () => expect((await call(replica, 'eth_getBlockByNumber', ['latest', false])).hash).toBe(genesis.hash), {
      timeout: 20_000,
      interval: 25,
    });
    expect(await call(replica, 'eth_getBlockByNumber', ['0x1', false])).toBeNull();
    expect(await call(replica, 'eth_getTransactionReceipt', [hash])).toBeNull();
    expect((await call(leader, 'eth_getTransactionByHash', [hash])).blockNumber).toBeNull();

    // The same attributes again: the transfer, pooled again, is built into the same block 1,
    // which the replica follows (its messages are not taken for the ones before the rewind).
    const again = await engine('engine_forkchoiceUpdatedV3', [state, attributes]);
    expect(again.error).toBeUndefined();
    await vi.waitFor(async () => expect((await call(replica, 'eth_getBlockByNumber', ['pending', false])).transactions).toContain(hash), {
      timeout: 20_000,
      interval: 25,
    });
    const rebuilt = await engine('engine_getPayloadV4', [again.result.payloadId]);
    expect(rebuilt.error).toBeUndefined();
    expect(rebuilt.result.executionPayload.blockHash).toBe(payload.blockHash);
    expect(await caughtUp(leader, replica, 20_000)).toBe(1);
    await sameChain(leader, replica, 1);
    expect((await call(replica, 'eth_getTransactionReceipt', [hash])).blockHash).toBe(payload.blockHash);
  });
});

describe("sequencer mode on Base mainnet's registry genesis (Canyon, Ecotone and later forks after genesis)", () => {
  let dir: string;
  let genesisFile: string;
  let t: TestNode;
  let engine: (method: string, params: unknown[]) => Promise<EngineAnswer>;
  const BLOCK_1 = JSON.parse(readFileSync(join(BASE_FIXTURES, 'base-mainnet-block-1/block.json'), 'utf8'));
  const EXPECTED = JSON.parse(readFileSync(join(BASE_FIXTURES, 'base-mainnet-block-1/expected.json'), 'utf8'));
  const GENESIS_HASH = '0xf712aa9241cc24369b143cf6dce85f0902a9731e70d66818a3a5845b296c73dd';
  const onBase = (c: { chain: { genesisFile?: string; rollupConfig?: string } }) => {
    c.chain.genesisFile = genesisFile;
    c.chain.rollupConfig = join(BASE_FIXTURES, 'chain-configs/base-mainnet.toml');
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'preconf-sequencer-base-'));
    genesisFile = join(dir, 'base-genesis.json');
    writeFileSync(genesisFile, gunzipSync(readFileSync(join(BASE_FIXTURES, 'base-mainnet-block-1/genesis.json.gz'))));
    const secretFile = join(dir, 'jwt.hex');
    // The builder runs (no --no-build), driven by the Engine API.
    t = await startTestNode({
      configure: (c) => {
        onBase(c);
        Object.assign(c.chain, { preconfIntervalMs: 100 });
        c.engine = { addr: '127.0.0.1', port: 0, jwtSecret: secretFile };
      },
    });
    engine = engineClient(t.node.engine!.url, secretFile);
  });
  afterAll(async () => {
    await t?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("builds Base's block 1 from its attributes with noTxPool: false and an empty pool: getPayloadV2 gives Base's block hash", async () => {
    const state = { headBlockHash: GENESIS_HASH, safeBlockHash: GENESIS_HASH, finalizedBlockHash: GENESIS_HASH };
    const attributes = {
      timestamp: BLOCK_1.header.timestamp,
      prevRandao: BLOCK_1.header.mixHash,
      suggestedFeeRecipient: BLOCK_1.header.miner,
      transactions: BLOCK_1.transactions,
      noTxPool: false,
      gasLimit: BLOCK_1.header.gasLimit,
    };
    const fcu = await engine('engine_forkchoiceUpdatedV2', [state, attributes]);
    expect(fcu.error).toBeUndefined();
    expect(fcu.result.payloadStatus.status).toBe('VALID');
    const id = fcu.result.payloadId as Hex;
    // Started in the builder: the L1-info deposit is pre-confirmed at once.
    const pending = (await rpc(t.node.url, 'eth_getBlockByNumber', ['pending', false])).result as { number: Hex; transactions: Hex[] };
    expect(pending.number).toBe('0x1');
    expect(pending.transactions).toEqual(BLOCK_1.transactions.map((raw: Hex) => keccak256(raw)));

    const got = await engine('engine_getPayloadV2', [id]);
    expect(got.error).toBeUndefined();
    const payload = got.result.executionPayload;
    expect(payload.stateRoot).toBe(EXPECTED.stateRoot);
    expect(payload.receiptsRoot).toBe(EXPECTED.receiptsRoot);
    expect(payload.baseFeePerGas).toBe(EXPECTED.baseFeePerGas);
    expect(payload.extraData).toBe('0x');
    expect(payload.blockHash).toBe(EXPECTED.blockHash);
    expect(payload.transactions).toEqual(BLOCK_1.transactions);
    // A Bedrock-era block: a V1 payload (no withdrawals before Canyon), no priority fees.
    expect(payload).not.toHaveProperty('withdrawals');
    expect(got.result.blockValue).toBe('0x0');

    // Sealed as the chain's latest, with no field of a later fork in its header.
    const latest = (await rpc(t.node.url, 'eth_getBlockByNumber', ['latest', false])).result as Record<string, unknown>;
    expect(latest.hash).toBe(EXPECTED.blockHash);
    for (const field of ['withdrawalsRoot', 'parentBeaconBlockRoot', 'blobGasUsed', 'excessBlobGas', 'requestsHash']) {
      expect(latest).not.toHaveProperty(field);
    }
    // Before Canyon a deposit receipt has no depositNonce.
    const receipt = (await rpc(t.node.url, 'eth_getTransactionReceipt', [keccak256(BLOCK_1.transactions[0])])).result as Record<string, unknown>;
    expect(receipt.blockHash).toBe(EXPECTED.blockHash);
    expect(receipt).not.toHaveProperty('depositNonce');

    // op-node then hands the block back and makes it the head: known, VALID.
    const known = await engine('engine_newPayloadV2', [payload]);
    expect(known.result).toEqual({ status: 'VALID', latestValidHash: EXPECTED.blockHash, validationError: null });
    const head = { headBlockHash: EXPECTED.blockHash, safeBlockHash: GENESIS_HASH, finalizedBlockHash: GENESIS_HASH };
    expect((await engine('engine_forkchoiceUpdatedV2', [head, null])).result.payloadStatus.status).toBe('VALID');
  });
});
