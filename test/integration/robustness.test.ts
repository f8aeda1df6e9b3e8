// Bad input of any kind gets a clear JSON-RPC error: never a crash, a hang, or an internal
// error. Every method is called with a spread of malformed parameters, with input nested
// to any depth, and with every quantity parameter at the edges of 53, 64, 128 and 256 bits.
// More work than a cost class queues is refused at once with -32005, not left to pile up.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData } from 'viem';
import { contract } from '../helpers/contracts.js';
import { PROBE, testGenesis } from '../helpers/genesis.js';
import { rawPost, rpc, startTestNode, type TestNode } from '../helpers/node.js';
import { scrape, valueOf } from '../helpers/prometheus.js';
import { RawWs } from '../helpers/ws.js';
import { QUANTITY_PARAMS, QUANTITY_VALUES, fits, roundedForms, type Reply } from '../helpers/quantities.js';

const METHODS = [
  'eth_chainId',
  'net_version',
  'web3_clientVersion',
  'eth_blockNumber',
  'eth_getBalance',
  'eth_getCode',
  'eth_getStorageAt',
  'eth_getTransactionCount',
  'eth_call',
  'eth_estimateGas',
  'eth_simulateV1',
  'eth_getBlockByNumber',
  'eth_getBlockByHash',
  'eth_getBlockReceipts',
  'eth_getTransactionByHash',
  'eth_getTransactionReceipt',
  'eth_sendRawTransaction',
  'eth_sendRawTransactionSync',
  'eth_gasPrice',
  'eth_maxPriorityFeePerGas',
  'eth_feeHistory',
  'eth_getLogs',
  'eth_subscribe',
  'eth_unsubscribe',
  'preconf_transactionStatus',
  'eth_getBlockTransactionCountByNumber',
  'eth_getTransactionByBlockNumberAndIndex',
  'debug_traceCall',
  'debug_traceTransaction',
  'debug_traceBlockByNumber',
  'debug_traceBlockByHash',
  'eth_createAccessList',
];

const BAD_PARAMS: unknown[][] = [
  [],
  [null],
  [1],
  [-1],
  [1e308],
  ['x'],
  ['0x'],
  [''],
  [{}],
  [[]],
  [true],
  ['0x' + 'f'.repeat(200)],
  ['0xzz', 'latest'],
  [{ a: { b: { c: [1, { d: null }] } } }, { e: 1 }],
  ['\u0000\uffff', '\ud83d\ude00'],
  [{ to: 5, data: {}, gas: [] }, 'pending'],
  [{ blockStateCalls: [{ calls: [{ gas: 'lots' }] }] }],
  [{ blockStateCalls: 'no' }, 'latest'],
  ['0x02f8', 'latest', 'extra', 'more', 'and more'],
  [{ fromBlock: {}, toBlock: [], topics: [[[]]] }],
  [Array.from({ length: 50 }, () => 'latest')],
];

describe('robustness', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode();
  });
  afterAll(() => t?.stop());

  it('answers every method with malformed parameters with a JSON-RPC error or a result', async () => {
    const batch = [];
    let id = 0;
    for (const method of METHODS) for (const params of BAD_PARAMS) batch.push({ jsonrpc: '2.0', id: id++, method, params });
    // In batches of at most 100, as one request each.
    for (let i = 0; i < batch.length; i += 100) {
      const slice = batch.slice(i, i + 100);
      const r = await rawPost(t.node.url, JSON.stringify(slice));
      expect(r.status).toBe(200);
      expect(r.json).toHaveLength(slice.length);
      for (const [j, resp] of (r.json as { id: number; error?: { code: number; message: string } }[]).entries()) {
        expect(resp.id).toBe(slice[j]!.id);
        if (resp.error) {
          expect(resp.error.code, `${slice[j]!.method} ${JSON.stringify(slice[j]!.params)}: ${resp.error.message}`).not.toBe(-32603);
          expect(resp.error.message.length).toBeGreaterThan(0);
        }
      }
    }
  });

  it('survives garbage bodies and still answers', async () => {
    const bodies = [
      '',
      ' ',
      'null',
      '"x"',
      '[[]]',
      '[null, 1, "a"]',
      '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]',
      '['.repeat(5000),
      '{"jsonrpc":"2.0","id":1e999,"method":"eth_chainId"}',
      '{"jsonrpc":"2.0","id":1,"method":"__proto__"}',
      '{"jsonrpc":"2.0","id":1,"method":"constructor"}',
      '{"jsonrpc":"2.0","id":1,"method":"toString"}',
      '\u0000\u0001\u0002',
    ];
    for (const body of bodies) {
      const r = await rawPost(t.node.url, body);
      expect([200], body.slice(0, 30)).toContain(r.status);
      if (r.text.length > 0) {
        const out = Array.isArray(r.json) ? r.json : [r.json];
        for (const o of out) expect(o.jsonrpc).toBe('2.0');
      }
    }
    const ok = await rawPost(t.node.url, '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}');
    expect(ok.json.result).toBe('0x7a69');
  });
});

/** `levels` arrays nested in each other, innermost empty. */
const deepArray = (levels: number): string => '['.repeat(levels) + ']'.repeat(levels);
/** `levels` objects nested in each other ({"a":{"a":...1}}). */
const deepObject = (levels: number): string => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
const request = (id: number, method: string, params: string): string => `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${params}}`;
const ADDRESS = '"0x1111111111111111111111111111111111111111"';

describe('cost-class queues', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode({
      configure: (c) => {
        c.chain.genesis = JSON.stringify(testGenesis('prague'));
        // Each request below names its own client in X-Forwarded-For.
        c.server.trustedProxies = 1;
      },
    });
  });
  afterAll(() => t?.stop());

  const burn = encodeFunctionData({ abi: contract('Probe').abi, functionName: 'burn' });
  const payload = { blockStateCalls: [{ calls: Array.from({ length: 5 }, () => ({ to: PROBE, data: burn, gas: '0x4c4b40' })) }] };
  const simulate = async (client: string): Promise<any> =>
    (await rawPost(t.node.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_simulateV1', params: [payload, 'latest'] }), { 'x-forwarded-for': client }))
      .json;
  const rejected = async () => valueOf((await scrape(t.node.url)).families, 'preconf_work_rejected_total', { class: 'simulate' });

  it('a full queue answers -32005 "server busy" at once, what it took is served, and the node keeps serving', async () => {
    // eth_simulateV1 runs on 2 threads with 64 waiting: 150 simulations from 150 clients
    // that each burn 25M gas (~20 ms) at once overflow it (the process's pools are shared:
    // count the difference).
    const before = await rejected();
    const replies = await Promise.all(Array.from({ length: 150 }, (_, i) => simulate(`10.0.${i >> 8}.${i & 255}`)));
    const busy = replies.filter((r) => r.error?.code === -32005);
    const served = replies.filter((r) => r.result !== undefined);
    expect(busy.length).toBeGreaterThan(0);
    expect(busy[0].error.message).toBe('server busy: 64 eth_simulateV1 requests are already queued; retry later');
    expect(served.length + busy.length).toBe(150);
    // At least the queue's 64 (plus what its threads had already taken off it).
    expect(served.length).toBeGreaterThanOrEqual(64);
    // burn() never returns: every simulation that ran reports its call out of gas.
    for (const r of served) expect(r.result[0].calls.map((c: { status: string }) => c.status)).toEqual(Array(5).fill('0x0'));
    expect((await rejected()) - before).toBe(busy.length);
    expect((await simulate('10.1.0.1')).result[0].calls[0].status).toBe('0x0');
  });

  it('one client holds at most a quarter of a queue: past its share it is refused while others are served', async () => {
    const before = await rejected();
    const flood = Promise.all(Array.from({ length: 40 }, () => simulate('10.2.0.1')));
    const other = await simulate('10.2.0.2');
    const replies = await flood;
    expect(other.result[0].calls[0].status).toBe('0x0');
    const busy = replies.filter((r) => r.error?.code === -32005);
    // 16 of the simulate queue's 64, queued or running.
    expect(replies.filter((r) => r.result !== undefined)).toHaveLength(16);
    expect(busy).toHaveLength(24);
    expect(busy[0].error.message).toBe('server busy: this client already has 16 eth_simulateV1 requests queued or running (its share); retry later');
    expect((await rejected()) - before).toBe(24);
  });
});

describe('nesting depth', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode();
  });
  afterAll(() => t?.stop());

  it('refuses an argument nested past 32 levels with -32602 naming it, at any depth, alone and in a batch', async () => {
    // [method, params with DEEP where the nested value goes, the argument it is in]
    const cases: [string, string, number][] = [
      ['eth_getBalance', '[DEEP,"latest"]', 0],
      ['eth_getBalance', `[${ADDRESS},DEEP]`, 1],
      ['eth_call', '[{"to":DEEP},"latest"]', 0],
      ['eth_call', `[{"to":${ADDRESS}},"latest",{"x":DEEP}]`, 2],
      ['eth_getLogs', '[{"topics":DEEP}]', 0],
      ['eth_simulateV1', '[{"blockStateCalls":[{"calls":DEEP}]}]', 0],
      ['eth_chainId', '[DEEP]', 0],
    ];
    for (const levels of [33, 1000, 20_000, 200_000]) {
      for (const deep of [deepArray(levels), deepObject(levels)]) {
        for (const [method, params, arg] of cases) {
          const what = `${method} with ${levels} levels (${deep.slice(0, 5)}) in argument ${arg}`;
          const r = await rawPost(t.node.url, request(7, method, params.replace('DEEP', deep)));
          expect(r.status, what).toBe(200);
          // eth_chainId takes no arguments: "too many" is the first thing wrong with it.
          if (method === 'eth_chainId') expect(r.json.error.code, what).toBe(-32602);
          else
            expect(r.json, what).toEqual({
              jsonrpc: '2.0',
              id: 7,
              error: { code: -32602, message: `invalid argument ${arg}: nested more than 32 levels deep` },
            });
        }
      }
    }
    // In a batch, only the deep request is refused; its neighbours are answered.
    const batch = await rawPost(
      t.node.url,
      `[${request(1, 'eth_chainId', '[]')},${request(2, 'eth_getBalance', `[${deepArray(20_000)},"latest"]`)},${request(3, 'eth_chainId', '[]')}]`,
    );
    expect(batch.json).toEqual([
      { jsonrpc: '2.0', id: 1, result: '0x7a69' },
      { jsonrpc: '2.0', id: 2, error: { code: -32602, message: 'invalid argument 0: nested more than 32 levels deep' } },
      { jsonrpc: '2.0', id: 3, result: '0x7a69' },
    ]);
    // A notification with deep parameters is not answered, like any other notification.
    const silent = await rawPost(t.node.url, `[{"jsonrpc":"2.0","method":"eth_getBalance","params":[${deepArray(20_000)}]}]`);
    expect(silent.status).toBe(200);
    expect(silent.text).toBe('');
  });

  it('lets 32 levels through to the validation of the argument itself', async () => {
    // An address nested 32 deep is refused as a bad address (the preview of it is cut short).
    const r = await rawPost(t.node.url, request(1, 'eth_getBalance', `[${deepArray(32)},"latest"]`));
    expect(r.json.error.code).toBe(-32602);
    expect(r.json.error.message).toMatch(/^invalid argument 0: hex string of 20 bytes expected for address, got \[{32}/);
    expect(r.json.error.message.length).toBeLessThan(200);
    // Unknown members of a call object are ignored (as geth does), however deep up to the limit.
    const call = await rawPost(t.node.url, request(2, 'eth_call', `[{"to":${ADDRESS},"x":${deepObject(31)}},"latest"]`));
    expect(call.json).toEqual({ jsonrpc: '2.0', id: 2, result: '0x' });
  });

  it('refuses deep members and deep bodies as invalid requests, and keeps serving', async () => {
    const member = await rawPost(t.node.url, `{"jsonrpc":"2.0","id":4,"method":"eth_chainId","extra":${deepObject(20_000)}}`);
    expect(member.json).toEqual({
      jsonrpc: '2.0',
      id: 4,
      error: { code: -32600, message: 'invalid request: member "extra" is nested more than 32 levels deep' },
    });
    // The whole body nested: a batch whose one item is not a request, or a non-request object.
    const arrays = await rawPost(t.node.url, deepArray(20_000));
    expect(arrays.json).toEqual([{ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'invalid request: a request must be a JSON object' } }]);
    const objects = await rawPost(t.node.url, deepObject(20_000));
    expect(objects.json.error.code).toBe(-32600);
    // As deep as the body limit (5 MiB) allows: JSON.parse copes, and the answer is the same.
    const widest = 2_600_000;
    const huge = await rawPost(t.node.url, request(5, 'eth_getBalance', `[${deepArray(widest)}]`));
    expect(huge.json).toEqual({ jsonrpc: '2.0', id: 5, error: { code: -32602, message: 'invalid argument 0: nested more than 32 levels deep' } });
    expect((await rawPost(t.node.url, request(6, 'eth_chainId', '[]'))).json.result).toBe('0x7a69');
  });

  it('answers the same over WebSocket', async () => {
    const ws = await RawWs.open(t.node.wsUrl);
    try {
      const r = await ws.requestText('eth_getBalance', `[${deepArray(20_000)},"latest"]`);
      expect(r.error).toEqual({ code: -32602, message: 'invalid argument 0: nested more than 32 levels deep' });
      const sub = await ws.requestText('eth_subscribe', `["logs",{"topics":${deepArray(20_000)}}]`);
      expect(sub.error).toEqual({ code: -32602, message: 'invalid argument 1: nested more than 32 levels deep' });
      expect((await ws.request('eth_chainId')).result).toBe('0x7a69');
    } finally {
      await ws.close();
    }
  });
});

describe('quantities past 2^53', () => {
  let t: TestNode;
  let genesisHash: string;
  beforeAll(async () => {
    t = await startTestNode();
    genesisHash = (await rawPost(t.node.url, request(1, 'eth_getBlockByNumber', '["0x0",false]'))).json.result.hash;
  });
  afterAll(() => t?.stop());

  it('answers every quantity parameter of every method, at 2^53+1 .. 2^256, exactly or with -32602 naming it', async () => {
    let checked = 0;
    for (const p of QUANTITY_PARAMS) {
      const values = Object.entries(QUANTITY_VALUES);
      const batch = values.map(([, q], i) => ({ jsonrpc: '2.0', id: i, method: p.method, params: p.params(q, { genesisHash }) }));
      const r = await rawPost(t.node.url, JSON.stringify(batch));
      expect(r.status).toBe(200);
      const replies = r.json as Reply[];
      expect(replies.map((x) => x.id)).toEqual(batch.map((b) => b.id));
      for (const [i, [name, q]] of values.entries()) {
        const reply = replies[i]!;
        const what = `${p.method} ${p.path} = ${name}: ${JSON.stringify(reply.error ?? reply.result).slice(0, 200)}`;
        expect(reply.error?.code, what).not.toBe(-32603);
        // Whatever comes back, the value was never rounded through a JavaScript number.
        const text = JSON.stringify(reply);
        for (const form of roundedForms(q)) {
          expect(new RegExp(`(?<![0-9a-fA-Fx])${form.replace('+', '\\+')}(?![0-9a-fA-F])`).test(text), `${what} echoes ${form}`).toBe(false);
        }
        if (fits(p, q)) {
          // Not refused as out of range, and the answer this value deserves.
          expect(reply.error?.message.startsWith(`${p.path}: `) ?? false, what).toBe(false);
          p.inRange(reply, q);
        } else {
          expect(reply.error?.code, what).toBe(-32602);
          expect(reply.error!.message.startsWith(`${p.path}: `), what).toBe(true);
          // An echoed value is the one sent, digit for digit.
          const echoed = reply.error!.message.match(/"(0x[0-9a-fA-F]+)"/)?.[1];
          if (echoed !== undefined) expect(echoed, what).toBe(q);
        }
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(400);
  });

  it('eth_getLogs toBlock 2^64-1 is refused as geth refuses it, never as "18446744073709552000"', async () => {
    // geth decodes block numbers into an int64: "invalid argument 0: block number larger
    // than int64" (-32602). Below that, a range past the head is geth's -32602 as well.
    const huge = await rawPost(t.node.url, request(1, 'eth_getLogs', '[{"fromBlock":"0x0","toBlock":"0xffffffffffffffff"}]'));
    expect(huge.json.error).toEqual({ code: -32602, message: 'invalid argument 0.toBlock: block number larger than int64: "0xffffffffffffffff"' });
    const int64 = await rawPost(t.node.url, request(2, 'eth_getLogs', '[{"fromBlock":"0x0","toBlock":"0x7fffffffffffffff"}]'));
    expect(int64.json.error).toEqual({ code: -32602, message: 'block range extends beyond current head block' });
  });
});
