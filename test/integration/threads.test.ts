// --threads N: N event loops serve one port and share one chain. Requests reach several
// loops (each answer says which loop served it), every loop answers from the same chain,
// subscribers on different loops all receive the builder's events, and it exits cleanly.

import { Agent, request } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { parseGwei, type Hex } from 'viem';
import { devAccount, rpc } from '../helpers/node.js';
import { spawnNode, type NodeProcess } from '../helpers/process.js';
import { waitFor } from '../helpers/wait.js';
import { RawWs } from '../helpers/ws.js';
import { signTransfer } from '../helpers/transfer.js';

const THREADS = 3;

interface Health {
  eventLoop: number;
  subscriptions: number;
  wsConnections: number;
}

interface Answer {
  status: number;
  body: string;
  localPort: number;
}

/** One HTTP exchange on the connection `agent` holds (a single kept-alive socket). */
function exchange(agent: Agent, url: string, method: 'GET' | 'POST', path: string, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method, agent, headers: body ? { 'content-type': 'application/json' } : {} }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, localPort: req.socket!.localPort! }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** /health over a fresh connection (the kernel picks the loop that accepts it). */
async function health(url: string): Promise<Health> {
  const agent = new Agent({ keepAlive: false });
  try {
    return JSON.parse((await exchange(agent, url, 'GET', '/health')).body) as Health;
  } finally {
    agent.destroy();
  }
}

/** Each loop's own /health, asking over fresh connections until every loop has answered. */
async function perLoop(url: string): Promise<Map<number, Health>> {
  const seen = new Map<number, Health>();
  await waitFor(
    async () => {
      const h = await health(url);
      seen.set(h.eventLoop, h);
      return seen.size === THREADS;
    },
    10_000,
    `/health answers from all ${THREADS} event loops`,
    0,
  );
  return seen;
}

describe('several event loops', () => {
  let node: NodeProcess | undefined;
  const sockets: RawWs[] = [];
  afterAll(async () => {
    for (const s of sockets) s.socket.terminate();
    await node?.kill('SIGKILL');
  });

  it(`serves one chain from ${THREADS} threads: reads on several loops, subscribers on several loops all receive, clean exit`, async () => {
    node = await spawnNode(['--ephemeral', '--threads', String(THREADS), '--preconf-interval-ms', '50', '--block-time-ms', '500']);
    expect(node.output()).toContain(`${THREADS} event loops`);

    // A transfer to a fresh address, sealed: only the node's one chain knows that balance.
    const fresh = `0x${Array.from({ length: 40 }, () => Math.floor(Math.random() * 16).toString(16)).join('')}` as Hex;
    const transfer = await signTransfer(devAccount(2), { to: fresh, nonce: 0, value: 4242n });
    const sent = (await rpc(node.url, 'eth_sendRawTransaction', [transfer])).result as Hex;
    await waitFor(async () => (await rpc(node!.url, 'eth_getTransactionReceipt', [sent])).result, 10_000, 'the transfer to be sealed', 20);

    // Reads: on each fresh connection, ask which loop holds it, then read on the same
    // connection. Different loops answer, and all of them from the same chain.
    const balanceByLoop = new Map<number, Set<string>>();
    for (let i = 0; i < 40; i++) {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const h = await exchange(agent, node.url, 'GET', '/health');
        const read = await exchange(
          agent,
          node.url,
          'POST',
          '/',
          JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [fresh, 'latest'] }),
        );
        expect(read.localPort, 'both requests on one connection').toBe(h.localPort);
        const loop = (JSON.parse(h.body) as Health).eventLoop;
        expect(loop).toBeGreaterThanOrEqual(0);
        expect(loop).toBeLessThan(THREADS);
        if (!balanceByLoop.has(loop)) balanceByLoop.set(loop, new Set());
        balanceByLoop.get(loop)!.add((JSON.parse(read.body) as { result: string }).result);
      } finally {
        agent.destroy();
      }
    }
    expect(balanceByLoop.size, 'loops that answered 40 fresh connections').toBeGreaterThanOrEqual(2);
    for (const [loop, balances] of balanceByLoop) expect([...balances], `loop ${loop}`).toEqual(['0x1092']);

    // Subscribers: open sockets (six at least) until subscribers sit on two loops or more
    // (per each loop's /health); then every one must receive the pre-confirmed transaction.
    const subs: string[] = [];
    const loopsWithSubscribers = async () => [...(await perLoop(node!.url)).values()].filter((h) => h.subscriptions > 0);
    await waitFor(
      async () => {
        const ws = await RawWs.open(node!.url.replace('http', 'ws'));
        sockets.push(ws);
        subs.push((await ws.request('eth_subscribe', ['newFlashblockTransactions'])).result as string);
        return sockets.length >= 6 && (await loopsWithSubscribers()).length >= 2;
      },
      20_000,
      'subscribers on two event loops',
      0,
    );
    const loops = await perLoop(node.url);
    expect(
      [...loops.values()].reduce((n, h) => n + h.subscriptions, 0),
      'subscriptions over all loops',
    ).toBe(sockets.length);
    expect([...loops.values()].filter((h) => h.subscriptions > 0).length).toBeGreaterThanOrEqual(2);

    const acct = devAccount(4);
    const raw = await signTransfer(acct, { to: acct.address, nonce: 0, value: 0n, maxFeePerGas: parseGwei('20') });
    // The synchronous send may land on any loop and still sees its pre-confirmation.
    const receipt = (await rpc(node.url, 'eth_sendRawTransactionSync', [raw])).result;
    expect(receipt.status).toBe('0x1');
    const hash = receipt.transactionHash as Hex;
    await Promise.all(sockets.map((s, i) => s.waitFor(subs[i]!, (r) => r === hash, 5_000)));

    await Promise.all(sockets.map((s) => s.close()));
    expect(await node.kill('SIGTERM')).toBe(0);
  });
});
