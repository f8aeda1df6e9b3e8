// Bad input of any kind gets a clear JSON-RPC error: never a crash, a hang, or an internal
// error. Every method is called with a spread of malformed parameters.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawPost, startTestNode, type TestNode } from '../helpers/node.js';

const METHODS = [
  'eth_chainId', 'net_version', 'web3_clientVersion', 'eth_blockNumber', 'eth_getBalance', 'eth_getCode',
  'eth_getStorageAt', 'eth_getTransactionCount', 'eth_call', 'eth_estimateGas', 'eth_simulateV1',
  'eth_getBlockByNumber', 'eth_getBlockByHash', 'eth_getBlockReceipts', 'eth_getTransactionByHash',
  'eth_getTransactionReceipt', 'eth_sendRawTransaction', 'eth_sendRawTransactionSync', 'eth_gasPrice',
  'eth_maxPriorityFeePerGas', 'eth_feeHistory', 'eth_getLogs', 'eth_subscribe', 'eth_unsubscribe',
  'preconf_transactionStatus', 'eth_getBlockTransactionCountByNumber', 'eth_getTransactionByBlockNumberAndIndex',
  'debug_traceCall', 'debug_traceTransaction', 'debug_traceBlockByNumber', 'debug_traceBlockByHash', 'eth_createAccessList',
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
  afterAll(() => t.stop());

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
