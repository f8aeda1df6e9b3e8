// Per-client rate limits for public endpoints: --rate-limit RPS and
// --rate-limit-heavy N per client address, the address taken from X-Forwarded-For behind
// --trusted-proxies N; refusals are HTTP 429 with Retry-After and a JSON-RPC error, and
// counted in /metrics. Off by default.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawPost, rpc, startTestNode, type TestNode } from '../helpers/node.js';
import { scrape, valueOf } from '../helpers/prometheus.js';
import { RawWs } from '../helpers/ws.js';

const LOOPER = '0x7777777777777777777777777777777777777777';
const loop = (id: number) => ({ jsonrpc: '2.0', id, method: 'eth_call', params: [{ to: LOOPER }, 'latest', { [LOOPER]: { code: '0x5b600056' } }] });
const chainId = (id: number) => ({ jsonrpc: '2.0', id, method: 'eth_chainId' });
const post = (t: TestNode, body: unknown, client?: string) =>
  rawPost(t.node.url, JSON.stringify(body), client === undefined ? {} : { 'x-forwarded-for': client });
const limited = async (t: TestNode, reason: string) => valueOf((await scrape(t.node.url)).families, 'preconf_rate_limited_total', { reason });

describe('--rate-limit', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode({
      configure: (c) => {
        c.server.rateLimit = 5;
        c.server.trustedProxies = 2;
      },
    });
  });
  afterAll(() => t?.stop());

  it('past its requests per second a client gets HTTP 429, Retry-After and a JSON-RPC error with its id; others are served', async () => {
    // Two trusted proxies: the client is the second entry from the right; what the client
    // wrote further left is not believed.
    const client = 'spoofed, 198.51.100.7, 10.0.0.2';
    const before = await limited(t, 'rps');
    // At once, so the bucket (5 a second) has no time to refill.
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => post(t, chainId(i), client)));
    const refused = answers.filter((a) => a.status === 429);
    expect(answers.filter((a) => a.status === 200).length).toBeGreaterThanOrEqual(5);
    expect(refused.length).toBeGreaterThan(0);
    const r = refused[0]!;
    expect(r.json.error.code).toBe(-32005);
    expect(r.json.error.message).toMatch(/^rate limited: more than 5 requests per second from this client; retry in \d+ s$/);
    expect(r.json.error.data.retryAfter).toBeGreaterThanOrEqual(1);
    expect(typeof r.json.id).toBe('number');
    // Each refusal says when to retry, in the header too. (Not asked again at once: on a
    // loaded machine the bucket may have refilled by then.)
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Another address behind the same proxies, and the same left-most spoof, are their own clients.
    expect((await post(t, chainId(1), 'spoofed, 198.51.100.8, 10.0.0.2')).status).toBe(200);
    expect((await limited(t, 'rps')) - before).toBe(refused.length);
    // A batch counts each request; the client's bucket refills with time.
    await expect.poll(async () => (await post(t, chainId(1), client)).status, { timeout: 5_000, interval: 100 }).toBe(200);
    const batch = await post(
      t,
      Array.from({ length: 30 }, (_, i) => chainId(i)),
      '203.0.113.9, 10.0.0.2',
    );
    expect(batch.status).toBe(200);
    const after = await post(t, [chainId(1), chainId(2)], '203.0.113.9, 10.0.0.2');
    expect(after.status).toBe(429);
    expect(after.json.map((x: { id: number }) => x.id)).toEqual([1, 2]);
  });

  it('over WebSocket the refusal is the JSON-RPC error alone', async () => {
    const ws = await RawWs.open(t.node.wsUrl);
    try {
      const replies = [];
      for (let i = 0; i < 40; i++) replies.push(await ws.request('eth_chainId', []));
      const refused = replies.filter((r) => r.error !== undefined);
      expect(refused.length).toBeGreaterThan(0);
      expect(refused[0].error.code).toBe(-32005);
      expect(ws.closeInfo).toBeUndefined();
    } finally {
      ws.close();
    }
  });
});

describe('--rate-limit-heavy', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode({ configure: (c) => void (c.server.rateLimitHeavy = 2) });
  });
  afterAll(() => t?.stop());

  it('a client runs at most N heavy requests at once: the next answers 429, cheap ones still pass', async () => {
    const before = await limited(t, 'heavy');
    const running = [post(t, loop(1)), post(t, loop(2))];
    await expect.poll(() => t.node.chain.metrics().workQueues.find((q) => q.class === 'calls')!.running, { timeout: 5_000, interval: 10 }).toBe(2);
    const third = await post(t, loop(3));
    expect(third.status).toBe(429);
    expect(third.json.id).toBe(3);
    expect(third.json.error.code).toBe(-32005);
    expect(third.json.error.message).toContain('rate limited: 2 heavy requests');
    expect((await rpc(t.node.url, 'eth_chainId')).result).toBe('0x7a69');
    for (const r of await Promise.all(running)) expect(r.json.error.message).toBe('out of gas');
    expect((await limited(t, 'heavy')) - before).toBe(1);
  });

  it("a batch's heavy requests wait for the client's own slots instead of failing", async () => {
    const r = await post(
      t,
      Array.from({ length: 6 }, (_, i) => loop(i)),
    );
    expect(r.status).toBe(200);
    expect((r.json as { error: { message: string } }[]).map((x) => x.error.message)).toEqual(Array(6).fill('out of gas'));
  });
});
