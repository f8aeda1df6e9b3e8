// The Engine API on its authenticated port, driven as op-node drives it: Base mainnet's
// genesis (the superchain registry's file with its chain TOML), then the payload attributes
// of Base's block 1 through engine_forkchoiceUpdatedV2 and engine_getPayloadV2 give exactly
// Base's block. Tokens are signed here with node:crypto, apart from the node's own code.

import { createHmac } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rpc, startTestNode, type TestNode } from '../helpers/node.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/op');
const BLOCK_1 = JSON.parse(readFileSync(join(FIXTURES, 'base-mainnet-block-1/block.json'), 'utf8'));
const EXPECTED = JSON.parse(readFileSync(join(FIXTURES, 'base-mainnet-block-1/expected.json'), 'utf8'));
const GENESIS_HASH = '0xf712aa9241cc24369b143cf6dce85f0902a9731e70d66818a3a5845b296c73dd';

function token(secret: Buffer, iat: number): string {
  const part = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  const signed = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ iat })}`;
  return `${signed}.${createHmac('sha256', secret).update(signed).digest('base64url')}`;
}

describe('Engine API', () => {
  let dir: string;
  let base: TestNode;
  let engineUrl: string;
  let secret: Buffer;
  let secretFile: string;

  const call = async (method: string, params: unknown[], auth = token(secret, Math.floor(Date.now() / 1000))) => {
    const res = await fetch(engineUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${auth}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    return { status: res.status, body: (await res.json()) as { result?: any; error?: { code: number; message: string } } };
  };

  const block1Attributes = (over: Record<string, unknown> = {}) => ({
    timestamp: BLOCK_1.header.timestamp,
    prevRandao: BLOCK_1.header.mixHash,
    suggestedFeeRecipient: BLOCK_1.header.miner,
    transactions: BLOCK_1.transactions,
    noTxPool: true,
    gasLimit: BLOCK_1.header.gasLimit,
    ...over,
  });
  const genesisState = { headBlockHash: GENESIS_HASH, safeBlockHash: GENESIS_HASH, finalizedBlockHash: GENESIS_HASH };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'preconf-engine-'));
    const genesis = join(dir, 'base-genesis.json');
    writeFileSync(genesis, gunzipSync(readFileSync(join(FIXTURES, 'base-mainnet-block-1/genesis.json.gz'))));
    secretFile = join(dir, 'secrets/jwt.hex');
    base = await startTestNode({
      configure: (c) => {
        c.chain.genesisFile = genesis;
        c.chain.rollupConfig = join(FIXTURES, 'chain-configs/base-mainnet.toml');
        c.chain.build = false;
        c.engine = { addr: '127.0.0.1', port: 0, jwtSecret: secretFile };
      },
    });
    engineUrl = base.node.engine!.url;
    secret = Buffer.from(readFileSync(secretFile, 'utf8').trim(), 'hex');
  });
  afterAll(async () => {
    await base?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates the JWT secret file when missing: 32 random bytes in hex', () => {
    expect(existsSync(secretFile)).toBe(true);
    expect(readFileSync(secretFile, 'utf8').trim()).toMatch(/^[0-9a-f]{64}$/);
    expect(secret.length).toBe(32);
  });

  it('answers 401 to a request without a token, with a bad signature, or with a stale or future iat', async () => {
    const now = Math.floor(Date.now() / 1000);
    const none = await fetch(engineUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
    });
    expect(none.status).toBe(401);
    const other = Buffer.alloc(32, 7);
    expect((await call('eth_chainId', [], token(other, now))).status).toBe(401);
    // 70 s, not 61: the clock may pass a second boundary between here and the server's check.
    expect((await call('eth_chainId', [], token(secret, now - 70))).status).toBe(401);
    expect((await call('eth_chainId', [], token(secret, now + 70))).status).toBe(401);
    const within = await call('eth_chainId', [], token(secret, now - 50));
    expect(within.status).toBe(200);
    expect(within.body.result).toBe('0x2105');
  });

  it('serves the engine_ methods on its port only, and exchanges capabilities', async () => {
    const caps = await call('engine_exchangeCapabilities', [['engine_forkchoiceUpdatedV3', 'engine_getPayloadV4']]);
    expect(caps.body.result).toEqual(
      expect.arrayContaining(['engine_forkchoiceUpdatedV2', 'engine_getPayloadV2', 'engine_getPayloadV4', 'engine_exchangeCapabilities']),
    );
    const onPublic = await rpc(base.node.url, 'engine_getPayloadV2', ['0x0000000000000001']);
    expect(onPublic.error?.code).toBe(-32601);
  });

  it("builds Base's block 1 from its payload attributes: forkchoiceUpdatedV2, then getPayloadV2 gives Base's block hash", async () => {
    const fcu = await call('engine_forkchoiceUpdatedV2', [genesisState, block1Attributes()]);
    expect(fcu.body.error).toBeUndefined();
    expect(fcu.body.result.payloadStatus).toEqual({ status: 'VALID', latestValidHash: GENESIS_HASH, validationError: null });
    const id = fcu.body.result.payloadId as string;
    expect(id).toMatch(/^0x02[0-9a-f]{14}$/);
    // The same attributes again name the same job.
    const again = await call('engine_forkchoiceUpdatedV2', [genesisState, block1Attributes()]);
    expect(again.body.result.payloadId).toBe(id);

    const got = await call('engine_getPayloadV2', [id]);
    expect(got.body.error).toBeUndefined();
    const payload = got.body.result.executionPayload;
    expect(payload.blockHash).toBe(EXPECTED.blockHash);
    expect(payload.parentHash).toBe(GENESIS_HASH);
    expect(payload.stateRoot).toBe(EXPECTED.stateRoot);
    expect(payload.receiptsRoot).toBe(EXPECTED.receiptsRoot);
    expect(payload.gasUsed).toBe(EXPECTED.gasUsed);
    expect(payload.baseFeePerGas).toBe(EXPECTED.baseFeePerGas);
    expect(payload.blockNumber).toBe('0x1');
    expect(payload.transactions).toEqual(BLOCK_1.transactions);
    // Before Canyon (Shanghai) the payload is a V1 one: no withdrawals.
    expect(payload).not.toHaveProperty('withdrawals');
    // Deposits pay no priority fee.
    expect(got.body.result.blockValue).toBe('0x0');
  });

  it('answers getPayloadBodiesByHashV1/ByRangeV1 from the store', async () => {
    const unknown = `0x${'cd'.repeat(32)}`;
    const byHash = await call('engine_getPayloadBodiesByHashV1', [[GENESIS_HASH, unknown]]);
    // Genesis has no transactions; before Canyon there are no withdrawals (null).
    expect(byHash.body.result).toEqual([{ transactions: [], withdrawals: null }, null]);
    // The range stops at the head (genesis here): block 1 is not stored, nothing trails.
    expect((await call('engine_getPayloadBodiesByRangeV1', ['0x1', '0x2'])).body.result).toEqual([]);
    expect((await call('engine_getPayloadBodiesByRangeV1', ['0x1', '0x401'])).body.error?.code).toBe(-38004);
    expect((await call('engine_getPayloadBodiesByHashV1', [['0x12']])).body.error?.code).toBe(-32602);
  });

  it('refuses what the Engine API spec refuses, with its codes', async () => {
    const fcu = await call('engine_forkchoiceUpdatedV2', [genesisState, block1Attributes()]);
    const id = fcu.body.result.payloadId as string;
    // Block 1 is a Bedrock block: V3 serves Ecotone's.
    expect((await call('engine_getPayloadV3', [id])).body.error?.code).toBe(-38005);
    expect((await call('engine_getPayloadV2', ['0x0123456789abcdef'])).body.error?.code).toBe(-38001);
    // A head the node does not know: SYNCING, nothing built.
    const unknown = `0x${'ab'.repeat(32)}`;
    const syncing = await call('engine_forkchoiceUpdatedV2', [{ ...genesisState, headBlockHash: unknown }, block1Attributes()]);
    expect(syncing.body.result).toEqual({ payloadStatus: { status: 'SYNCING', latestValidHash: null, validationError: null }, payloadId: null });
    expect((await call('engine_forkchoiceUpdatedV2', [{ ...genesisState, safeBlockHash: unknown }, null])).body.error?.code).toBe(-38002);
    // OP attributes carry a gas limit; withdrawals only from Canyon; a beacon root not in V2.
    expect((await call('engine_forkchoiceUpdatedV2', [genesisState, block1Attributes({ gasLimit: undefined })])).body.error?.code).toBe(-38003);
    expect((await call('engine_forkchoiceUpdatedV2', [genesisState, block1Attributes({ withdrawals: [] })])).body.error?.code).toBe(-38003);
    const root = `0x${'11'.repeat(32)}`;
    expect((await call('engine_forkchoiceUpdatedV2', [genesisState, block1Attributes({ parentBeaconBlockRoot: root })])).body.error?.code).toBe(-38003);
    // A malformed member is invalid params, naming it.
    const bad = await call('engine_forkchoiceUpdatedV2', [genesisState, block1Attributes({ prevRandao: '0x12' })]);
    expect(bad.body.error?.code).toBe(-32602);
    expect(bad.body.error?.message).toContain('prevRandao');
    // A transaction that does not decode: invalid attributes.
    expect((await call('engine_forkchoiceUpdatedV2', [genesisState, block1Attributes({ transactions: ['0x7e00'] })])).body.error?.code).toBe(-38003);
    // No attributes: the forkchoice alone, VALID and no job.
    const plain = await call('engine_forkchoiceUpdatedV2', [genesisState, null]);
    expect(plain.body.result).toEqual({ payloadStatus: { status: 'VALID', latestValidHash: GENESIS_HASH, validationError: null }, payloadId: null });
  });
});
