// Where clients saw this node differ from anvil or geth, each checked against anvil as
// dev-clients.test.ts does: HEAD / answers without a body and not 404; evm_increaseTime after
// blocks mined faster than one a second still moves the next block by the whole increase;
// a client's eth_simulateV1 slot is free once it has its answer, so 16 connections sending
// one request after another are never told they hold too many. And input that used to reach
// an internal error (-32603) is refused as the client's: code under the EIP-7702 prefix that
// is not a delegation, and eth_simulateV1 from a sender whose nonce is at its maximum.

import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnvil, type Anvil } from '../helpers/anvil.js';
import { devAccount, rpc, startTestNode, type TestNode } from '../helpers/node.js';

const SENDER = devAccount(0).address;
const TARGET = '0x000000000000000000000000000000000000c0de';
/** Starts with the EIP-7702 marker but is 5 bytes, not a 23-byte delegation. */
const BAD_DELEGATION = '0xef01000102';
/** A real delegation: 0xef0100 and the address it points at. */
const DELEGATION = `0xef0100${'11'.repeat(20)}`;

describe('compatibility with anvil and geth', () => {
  let anvil: Anvil;
  let t: TestNode;
  beforeAll(async () => {
    [anvil, t] = await Promise.all([startAnvil(['--hardfork', 'prague']), startTestNode()]);
  });
  afterAll(async () => {
    await Promise.all([anvil?.stop(), t?.stop()]);
  });

  it('HEAD / answers without a body, as geth (200) and anvil (405) do, not 404', async () => {
    for (const url of [anvil.url, t.node.url]) {
      const res = await fetch(`${url}/`, { method: 'HEAD' });
      expect([200, 405], url).toContain(res.status);
      expect(await res.text(), url).toBe('');
    }
    expect((await fetch(`${t.node.url}/`, { method: 'HEAD' })).status).toBe(200);
  });

  it('evm_increaseTime after blocks mined within a second moves the next block by the whole increase', async () => {
    for (const url of [anvil.url, t.node.url]) {
      // Five blocks at once: faster than the clock, so this node stamps them a second apart.
      expect((await rpc(url, 'anvil_mine', ['0x5'])).error, url).toBeUndefined();
      const before = (await rpc(url, 'eth_getBlockByNumber', ['latest', false])).result;
      expect((await rpc(url, 'evm_increaseTime', [3600])).error, url).toBeUndefined();
      expect((await rpc(url, 'anvil_mine', ['0x1'])).error, url).toBeUndefined();
      const after = (await rpc(url, 'eth_getBlockByNumber', ['latest', false])).result;
      expect(BigInt(after.number), url).toBe(BigInt(before.number) + 1n);
      expect(BigInt(after.timestamp) - BigInt(before.timestamp), url).toBeGreaterThanOrEqual(3600n);
    }
  });

  it('frees a client eth_simulateV1 slot before the client hears back: 16 connections, one request after another', async () => {
    const payload = { blockStateCalls: [{ calls: [{ from: SENDER, to: TARGET, value: '0x1' }] }] };
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_simulateV1', params: [payload, 'pending'] });
    const url = new URL(t.node.url);
    const post = (agent: http.Agent): Promise<any> =>
      new Promise((resolve, reject) => {
        const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
        });
        req.on('error', reject);
        req.end(body);
      });
    // Sixteen connections from one address hold exactly the client's share of the queue.
    const agents = Array.from({ length: 16 }, () => new http.Agent({ keepAlive: true, maxSockets: 1 }));
    const refused: string[] = [];
    let answered = 0;
    await Promise.all(
      agents.map(async (agent) => {
        for (let i = 0; i < 60; i++) {
          const r = await post(agent);
          if (r.error) refused.push(`${r.error.code} ${r.error.message}`);
          else answered++;
        }
      }),
    );
    for (const a of agents) a.destroy();
    expect(refused).toEqual([]);
    expect(answered).toBe(16 * 60);
  }, 120_000);
});

describe('input that is the client fault answers -32602, not -32603', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode();
  });
  afterAll(async () => {
    await t?.stop();
  });

  const call = { from: SENDER, to: TARGET };
  const overrides = (code: string) => ({ [TARGET]: { code } });

  it('refuses code under the EIP-7702 prefix that is not a delegation, in every method that takes code', async () => {
    const requests: [string, unknown[]][] = [
      ['eth_call', [call, 'latest', overrides(BAD_DELEGATION)]],
      ['eth_estimateGas', [call, 'latest', overrides(BAD_DELEGATION)]],
      ['debug_traceCall', [call, 'latest', { stateOverrides: overrides(BAD_DELEGATION) }]],
      ['eth_simulateV1', [{ blockStateCalls: [{ stateOverrides: overrides(BAD_DELEGATION), calls: [call] }] }, 'latest']],
      ['eth_simulateV1', [{ blockStateCalls: [{ stateOverrides: overrides(`0xef0101${'11'.repeat(20)}`), calls: [call] }] }, 'latest']],
      ['anvil_setCode', [TARGET, BAD_DELEGATION]],
    ];
    for (const [method, params] of requests) {
      const r = await rpc(t.node.url, method, params);
      expect(r.error?.code, `${method} ${JSON.stringify(r)}`).toBe(-32602);
      expect(r.error.message, method).toMatch(/code starting with 0xef01 must be an EIP-7702 delegation/);
    }
    // A state dump (anvil's JSON, plain) holding such code is refused naming the account.
    const dump = JSON.stringify({ accounts: { [TARGET]: { nonce: 0, balance: '0x0', code: BAD_DELEGATION, storage: {} } } });
    const loaded = await rpc(t.node.url, 'anvil_loadState', [`0x${Buffer.from(dump).toString('hex')}`]);
    expect(loaded.error?.code, JSON.stringify(loaded)).toBe(-32602);
    expect(loaded.error.message).toMatch(/starts with 0xef01 but is not an EIP-7702 delegation/);
    // A real delegation is accepted everywhere.
    expect((await rpc(t.node.url, 'eth_call', [call, 'latest', overrides(DELEGATION)])).result).toBe('0x');
    const traced = await rpc(t.node.url, 'debug_traceCall', [call, 'latest', { stateOverrides: overrides(DELEGATION), tracer: 'callTracer' }]);
    expect(traced.error).toBeUndefined();
    expect((await rpc(t.node.url, 'anvil_setCode', [TARGET, DELEGATION])).error).toBeUndefined();
    // The node is still answering.
    expect((await rpc(t.node.url, 'eth_chainId')).result).toBe('0x7a69');
  });

  it('refuses eth_simulateV1 with validation from a sender whose nonce is at its maximum', async () => {
    const payload = {
      validation: true,
      blockStateCalls: [{ stateOverrides: { [SENDER]: { nonce: '0xffffffffffffffff' } }, calls: [{ ...call, value: '0x0' }] }],
    };
    const r = await rpc(t.node.url, 'eth_simulateV1', [payload, 'latest']);
    expect(r.error?.code, JSON.stringify(r)).toBe(-32602);
    expect(r.error.message).toMatch(/nonce has max value/);
  });
});
