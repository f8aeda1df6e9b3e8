// Fairness between clients (one heavy client must not starve the others): one batch of 1,000
// eth_calls that each loop until the gas cap runs out must not hold up another client's
// eth_call. The batch's heavy requests run a few at a time, as a client of their own in the
// calls pool, within a time budget for the whole batch.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawPost, rpc, startTestNode, type TestNode } from '../helpers/node.js';

const LOOPER = '0x7777777777777777777777777777777777777777';
/** JUMPDEST PUSH1 0 JUMP: loops until the gas runs out. */
const LOOP = '0x5b600056';
const loopCall = (id: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'eth_call',
  params: [{ to: LOOPER }, 'latest', { [LOOPER]: { code: LOOP } }],
});

describe('one client floods the calls pool', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode({ configure: (c) => void (c.server.batchBudgetMs = 3_000) });
  });
  afterAll(() => t?.stop());

  it("another client's eth_call stays under 100 ms while a batch of 1,000 looping calls runs", async () => {
    const batch = Array.from({ length: 1000 }, (_, i) => loopCall(i));
    let floodDone = false;
    const flood = rawPost(t.node.url, JSON.stringify(batch)).then((r) => {
      floodDone = true;
      return r;
    });
    // Wait until the flood is running: the calls pool reports jobs of it.
    const running = async () => (await rpc(t.node.url, 'eth_blockNumber')) && t.node.chain.metrics().workQueues.find((q) => q.class === 'calls')!.running;
    await expect.poll(running, { timeout: 5_000, interval: 20 }).toBeGreaterThan(0);
    const latencies: number[] = [];
    while (!floodDone && latencies.length < 40) {
      const started = performance.now();
      const r = await rpc(t.node.url, 'eth_call', [{ to: '0x00000000000000000000000000000000000000aa', data: '0x' }, 'latest']);
      latencies.push(performance.now() - started);
      expect(r.result).toBe('0x');
    }
    const answered = await flood;
    expect(latencies.length).toBeGreaterThanOrEqual(10);
    expect(Math.max(...latencies), `latencies ${latencies.map((l) => l.toFixed(1)).join(' ')}`).toBeLessThan(100);

    // Every item of the flood is answered with its id: out of gas while the budget lasted,
    // then the budget's refusal.
    expect(answered.status).toBe(200);
    const replies = answered.json as { id: number; error?: { code: number; message: string } }[];
    expect(replies.map((r) => r.id)).toEqual(batch.map((b) => b.id));
    const ran = replies.filter((r) => r.error?.code === -32000);
    const refused = replies.filter((r) => r.error?.code === -32005);
    expect(ran.length).toBeGreaterThan(0);
    expect(ran[0]!.error!.message).toBe('out of gas');
    expect(refused.length).toBeGreaterThan(0);
    expect(ran.length + refused.length).toBe(1000);
    expect(refused[0]!.error!.message).toBe('batch time budget of 3000 ms used up before this request started; send it again on its own');
  });

  it('a batch of cheap calls is served whole, its answers in order', async () => {
    const batch = Array.from({ length: 200 }, (_, i) => ({
      jsonrpc: '2.0',
      id: i,
      method: i % 2 === 0 ? 'eth_call' : 'eth_chainId',
      params: i % 2 === 0 ? [{ to: '0x00000000000000000000000000000000000000aa' }, 'latest'] : [],
    }));
    const r = await rawPost(t.node.url, JSON.stringify(batch));
    expect((r.json as { id: number; result: string }[]).map((x) => [x.id, x.result])).toEqual(
      batch.map((b) => [b.id, b.method === 'eth_call' ? '0x' : '0x7a69']),
    );
  });
});
