// Requests a hostile client sends: parameters whose size multiplies the work or the answer
// are refused with -32602 naming the limit, eth_simulateV1 refuses malformed calls as
// eth_call does, and ids come back exactly as sent.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawPost, rpc, startTestNode, type TestNode } from '../helpers/node.js';

const FROM = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const TO = '0x00000000000000000000000000000000000000aa';
const addr = (i: number) => `0x${i.toString(16).padStart(40, '0')}`;
const slot = (i: number) => `0x${i.toString(16).padStart(64, '0')}`;

describe('sizes that multiply work or output', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode({ configure: (c) => void (c.server.batchMaxResponseBytes = 2048) });
  });
  afterAll(() => t?.stop());

  it('eth_feeHistory takes at most 100 reward percentiles (geth), refusing more with -32602 at once', async () => {
    const hundred = Array.from({ length: 100 }, (_, i) => i);
    const ok = await rpc(t.node.url, 'eth_feeHistory', ['0x400', 'latest', hundred]);
    expect(ok.result.reward[0]).toHaveLength(100);
    const started = performance.now();
    const r = await rpc(t.node.url, 'eth_feeHistory', ['0x400', 'latest', Array(100_000).fill(0)]);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(r.error).toEqual({ code: -32602, message: 'invalid argument 2: invalid reward percentile: over the query limit 100 (got 100000)' });
    const one = await rpc(t.node.url, 'eth_feeHistory', ['0x1', 'latest', [...hundred, 100]]);
    expect(one.error.code).toBe(-32602);
  });

  it('state overrides name at most 1,024 accounts and 16,384 storage slots', async () => {
    const accounts = Object.fromEntries(Array.from({ length: 1025 }, (_, i) => [addr(i + 1), { balance: '0x1' }]));
    const r = await rpc(t.node.url, 'eth_call', [{ to: TO }, 'latest', accounts]);
    expect(r.error).toEqual({ code: -32602, message: 'invalid argument 2: too many accounts in state overrides: 1025 > 1024' });
    const state = Object.fromEntries(Array.from({ length: 16_385 }, (_, i) => [slot(i), slot(1)]));
    for (const method of ['eth_estimateGas', 'eth_createAccessList']) {
      const s = await rpc(t.node.url, method, [{ from: FROM, to: TO }, 'latest', { [TO]: { state } }]);
      expect(s.error).toEqual({ code: -32602, message: 'invalid argument 2: too many storage slots in state overrides: 16385 > 16384' });
    }
    const sim = await rpc(t.node.url, 'eth_simulateV1', [{ blockStateCalls: [{ stateOverrides: accounts, calls: [] }] }, 'latest']);
    expect(sim.error.code).toBe(-32602);
    expect(sim.error.message).toContain('too many accounts in state overrides: 1025 > 1024');
    // At the limits, served.
    const fine = Object.fromEntries(Array.from({ length: 1024 }, (_, i) => [addr(i + 1), { balance: '0x1' }]));
    expect((await rpc(t.node.url, 'eth_call', [{ to: TO }, 'latest', fine])).result).toBe('0x');
  });

  it("a batch's answer stops growing past its byte limit: the rest answer -32003 with their ids (geth)", async () => {
    const batch = Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_chainId' }));
    const r = await rawPost(t.node.url, JSON.stringify(batch));
    const replies = r.json as { id: number; result?: string; error?: { code: number; message: string } }[];
    expect(replies.map((x) => x.id)).toEqual(batch.map((b) => b.id));
    const served = replies.filter((x) => x.result === '0x7a69').length;
    // Served up to and including the answer that passed 2,048 bytes.
    const size = (n: number) => replies.slice(0, n).reduce((sum, x) => sum + JSON.stringify(x).length, 0);
    expect(size(served - 1)).toBeLessThanOrEqual(2048);
    expect(size(served)).toBeGreaterThan(2048);
    expect(served).toBeLessThan(100);
    expect(replies[served]!.error).toEqual({ code: -32003, message: "response too large: the batch's answer passed 2048 bytes" });
    expect(replies.slice(served).every((x) => x.error?.code === -32003)).toBe(true);
  });
});

describe('eth_simulateV1 refuses malformed calls as eth_call does', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode();
  });
  afterAll(() => t?.stop());

  const hash = (version: number) => `0x${version.toString(16).padStart(2, '0')}${'00'.repeat(31)}`;
  const fee = { maxFeePerGas: '0x77359400', maxFeePerBlobGas: '0x1' };
  const cases: [string, Record<string, unknown>][] = [
    ['a type-4 call without an authorization list', { from: FROM, to: TO, type: '0x4', maxFeePerGas: '0x77359400' }],
    ['blobVersionedHashes: []', { from: FROM, to: TO, type: '0x3', blobVersionedHashes: [], ...fee }],
    ['more blobs than the limit', { from: FROM, to: TO, type: '0x3', blobVersionedHashes: Array(10).fill(hash(1)), ...fee }],
    ['a blob hash with a bad version byte', { from: FROM, to: TO, type: '0x3', blobVersionedHashes: [hash(2)], ...fee }],
  ];

  for (const [name, call] of cases) {
    it(`${name}: -32000 in eth_call's words, with and without validation`, async () => {
      const expected = (await rpc(t.node.url, 'eth_call', [call, 'latest'])).error;
      expect(expected.code).toBe(-32000);
      expect((await rpc(t.node.url, 'eth_estimateGas', [call, 'latest'])).error).toEqual(expected);
      for (const validation of [false, true]) {
        const s = await rpc(t.node.url, 'eth_simulateV1', [{ blockStateCalls: [{ calls: [call] }], validation }, 'latest']);
        expect(s.error).toEqual(expected);
      }
    });
  }

  it("type 3 without maxFeePerBlobGas: eth_call's refusal under validation (without it, fees are not checked, as in geth)", async () => {
    const call = { from: FROM, to: TO, type: '0x3', blobVersionedHashes: [hash(1)], maxFeePerGas: '0x77359400' };
    const expected = (await rpc(t.node.url, 'eth_call', [call, 'latest'])).error;
    expect(expected.code).toBe(-32000);
    const s = await rpc(t.node.url, 'eth_simulateV1', [{ blockStateCalls: [{ calls: [call] }], validation: true }, 'latest']);
    expect(s.error).toEqual(expected);
  });

  it("init code over 49,152 bytes: geth's simulate code -38025", async () => {
    const call = { from: FROM, data: `0x${'00'.repeat(49_153)}` };
    expect((await rpc(t.node.url, 'eth_call', [call, 'latest'])).error).toEqual({ code: -32000, message: 'max initcode size exceeded' });
    const s = await rpc(t.node.url, 'eth_simulateV1', [{ blockStateCalls: [{ calls: [call] }] }, 'latest']);
    expect(s.error.code).toBe(-38025);
    expect(s.error.message).toContain('max initcode size exceeded');
  });
});

describe('ids are echoed exactly', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode();
  });
  afterAll(() => t?.stop());

  const IDS = ['9007199254740993', '1e400', '-1e400', '123456789012345678901234567890', '1.50', '-9007199254740993', '12345678901234567890.000001'];

  it('a number id that a double cannot hold comes back as its own text, alone, in a batch and in errors', async () => {
    for (const id of IDS) {
      const single = await rawPost(t.node.url, `{"jsonrpc":"2.0","id":${id},"method":"eth_chainId"}`);
      expect(single.text).toBe(`{"jsonrpc":"2.0","id":${id},"result":"0x7a69"}`);
      const unknown = await rawPost(t.node.url, `{"method":"eth_nope", "id" : ${id} ,"jsonrpc":"2.0"}`);
      expect(unknown.text.startsWith(`{"jsonrpc":"2.0","id":${id},"error":`)).toBe(true);
      const bad = await rawPost(t.node.url, `{"jsonrpc":"2.0","id":${id},"method":"eth_getBalance","params":["0x12"]}`);
      expect(bad.text.startsWith(`{"jsonrpc":"2.0","id":${id},"error":{"code":-32602`)).toBe(true);
    }
    const items = IDS.map((id, i) => `{"jsonrpc":"2.0","params":[{"a":[1,"}"]}],"id":${id},"method":"${i % 2 ? 'eth_chainId' : 'eth_call'}"}`);
    const batch = await rawPost(t.node.url, `[${items.join(' , ')}, {"jsonrpc":"2.0","method":"eth_chainId"}, 7]`);
    const texts = batch.text.slice(1, -1);
    for (const id of IDS) expect(texts).toContain(`{"jsonrpc":"2.0","id":${id},`);
    expect(batch.json).toHaveLength(IDS.length + 1);
  });

  it('the last of duplicate "id" members wins, as JSON.parse reads it, escapes included', async () => {
    const r = await rawPost(t.node.url, `{"jsonrpc":"2.0","id":1,"method":"eth_chainId","\\u0069d":9007199254740995}`);
    expect(r.text).toBe('{"jsonrpc":"2.0","id":9007199254740995,"result":"0x7a69"}');
    const s = await rawPost(t.node.url, `{"id":"x\\"id\\":5","jsonrpc":"2.0","method":"eth_chainId","id":1e999}`);
    expect(s.text).toBe('{"jsonrpc":"2.0","id":1e999,"result":"0x7a69"}');
  });

  // A safe integer written another way (1.0, 0.1e1) is the same number, echoed as 1.
  it('safe integers and strings are echoed as parsed', async () => {
    const r = await rawPost(t.node.url, '[{"jsonrpc":"2.0","id":42,"method":"eth_chainId"},{"jsonrpc":"2.0","id":"9007199254740993","method":"eth_chainId"}]');
    expect(r.text).toBe('[{"jsonrpc":"2.0","id":42,"result":"0x7a69"},{"jsonrpc":"2.0","id":"9007199254740993","result":"0x7a69"}]');
  });
});
