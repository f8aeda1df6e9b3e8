// Read replicas answer exactly as the leader: one leader (--publish) and two replicas
// (--follow) on a real nats-server, each the real command. After each pre-confirmation and
// each seal, the same batch of every read method at every block tag goes to all three, and
// the raw response texts must be equal; WebSocket subscriptions on a replica deliver the
// leader's payloads byte for byte.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createWalletClient, defineChain, encodeFunctionData, http, type Hex } from 'viem';
import { contract } from '../helpers/contracts.js';
import { devAccount, rawPost } from '../helpers/node.js';
import { call, canonical, Cluster } from '../helpers/replicas.js';
import { Senders } from '../helpers/traffic.js';
import { waitFor } from '../helpers/wait.js';
import { RawWs } from '../helpers/ws.js';

type Call = [string, unknown[]];
const hex = (n: number): string => `0x${n.toString(16)}`;
const devChain = (url: string) =>
  defineChain({ id: 31337, name: 'dev', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [url] } } });

interface Context {
  token: Hex;
  holder: Hex;
  txs: Hex[];
}

/** Every read method, at every tag and selector kind. First and last: the pending block,
 *  which tells whether the node moved on while answering. */
function reads(head: number, headHash: string, ctx: Context): Call[] {
  const { token, holder } = ctx;
  const { abi } = contract('Token');
  const balanceOf = encodeFunctionData({ abi, functionName: 'balanceOf', args: [holder] });
  const transfer = encodeFunctionData({ abi, functionName: 'transfer', args: [`0x${'ab'.repeat(20)}`, 1n] });
  const tags = ['latest', 'pending', 'safe', 'finalized', 'earliest', hex(head), hex(Math.max(head - 1, 0))];
  const selectors: unknown[] = [...tags, { blockHash: headHash }, { blockNumber: hex(Math.max(head - 1, 0)) }];
  const calls: Call[] = [['eth_getBlockByNumber', ['pending', false]]];
  for (const at of selectors) {
    calls.push(
      ['eth_getBalance', [holder, at]],
      ['eth_getTransactionCount', [holder, at]],
      ['eth_getCode', [token, at]],
      ['eth_getStorageAt', [token, '0x1', at]],
      ['eth_call', [{ to: token, data: balanceOf }, at]],
      ['eth_estimateGas', [{ from: holder, to: token, data: transfer }, at]],
      ['eth_getProof', [token, ['0x1'], at]],
    );
  }
  for (const tag of tags) {
    calls.push(
      ['eth_getBlockByNumber', [tag, false]],
      ['eth_getBlockByNumber', [tag, true]],
      ['eth_getBlockTransactionCountByNumber', [tag]],
      ['eth_getTransactionByBlockNumberAndIndex', [tag, '0x0']],
      ['eth_getBlockReceipts', [tag]],
      ['eth_feeHistory', ['0x4', tag, [25, 75]]],
    );
  }
  const simulation = { blockStateCalls: [{ calls: [{ from: holder, to: token, data: transfer }] }], traceTransfers: true };
  calls.push(
    ['eth_getBlockByHash', [headHash, true]],
    ['eth_getBlockTransactionCountByHash', [headHash]],
    ['eth_getTransactionByBlockHashAndIndex', [headHash, '0x0']],
    ['eth_blockNumber', []],
    ['eth_chainId', []],
    ['eth_gasPrice', []],
    ['eth_maxPriorityFeePerGas', []],
    ['eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest' }]],
    ['eth_getLogs', [{ fromBlock: hex(Math.max(head - 3, 0)), toBlock: 'latest', address: token }]],
    ['eth_simulateV1', [simulation, 'pending']],
    ['eth_simulateV1', [simulation, 'latest']],
    ['eth_call', [{ from: holder, to: token, data: transfer }]],
    ['eth_estimateGas', [{ from: holder, to: `0x${'cd'.repeat(20)}`, value: '0x1' }]],
    ['eth_accounts', []],
    ['eth_syncing', []],
    ['net_version', []],
  );
  for (const h of ctx.txs.slice(-6)) {
    calls.push(['eth_getTransactionByHash', [h]], ['eth_getTransactionReceipt', [h]], ['preconf_transactionStatus', [h]]);
  }
  calls.push(['eth_getBlockByNumber', ['pending', false]]);
  return calls;
}

const pendingKey = (b: any): string => `${Number(b.number)}.${Number(b.preconfIndex)}`;
/** Whether pre-confirmation `a` ("number.index") is `b` or a later one. */
const atOrPast = (a: string, b: string): boolean => {
  const [an, ai] = a.split('.').map(Number);
  const [bn, bi] = b.split('.').map(Number);
  return an! > bn! || (an === bn && ai! >= bi!);
};

describe('read replicas', () => {
  let cluster: Cluster;
  let ctx: Context;
  let load: Senders | undefined;
  const sockets: RawWs[] = [];
  /** Each socket's subscription ids, in the order of KINDS. */
  const subscriptions = new Map<RawWs, string[]>();
  afterAll(async () => {
    await load?.stop();
    await Promise.all(sockets.map((s) => s.close()));
    await cluster?.stop();
  });

  beforeAll(async () => {
    // Replicas with two event loops each: forwarding, reads and subscriptions on both.
    cluster = await Cluster.start({ replicas: 2, chainArgs: ['--preconf-interval-ms', '250', '--block-time-ms', '1000'], replicaArgs: ['--threads', '2'] });
    // Deployed through a replica: estimate, nonce and fees answered there, the raw
    // transaction forwarded to the leader, the receipt polled from the replica.
    const via = cluster.replica(0).url;
    const account = devAccount(0);
    const wallet = createWalletClient({ chain: devChain(via), transport: http(via), account });
    const client = createPublicClient({ chain: devChain(via), transport: http(via), pollingInterval: 50 });
    const { abi, bytecode } = contract('Token');
    const hash = await wallet.deployContract({ abi, bytecode, args: [1_000_000n] });
    const receipt = await client.waitForTransactionReceipt({ hash, timeout: 15_000 });
    ctx = { token: receipt.contractAddress!, holder: account.address, txs: [hash] };
  });

  it('answer every read method at every tag exactly as the leader, after each pre-confirmation and seal', async () => {
    const urls = [cluster.leader.url, cluster.replica(0).url, cluster.replica(1).url];
    // Subscribers on every node, for the last test.
    for (const url of urls) {
      const ws = await RawWs.open(url.replace('http', 'ws'));
      const ids: string[] = [];
      for (const params of [['newFlashblocks'], ['newHeads'], ['logs', {}], ['pendingLogs', {}], ['newFlashblockTransactions', true]]) {
        ids.push((await ws.request('eth_subscribe', params)).result as string);
      }
      subscriptions.set(ws, ids);
      sockets.push(ws);
    }
    load = new Senders(() => [cluster.replica(1).url], [5, 6], 120, 'reask');
    const wallet = createWalletClient({ chain: devChain(cluster.leader.url), transport: http(cluster.leader.url), account: devAccount(0) });
    const { abi } = contract('Token');
    let last = '';
    const compared = { preconfs: 0, opened: 0 };
    for (let round = 0; compared.preconfs + compared.opened < 16; round++) {
      if (round % 3 === 0) {
        ctx.txs.push(
          await wallet.writeContract({ chain: null, address: ctx.token, abi, functionName: 'transfer', args: [`0x${'ab'.repeat(20)}`, BigInt(round + 1)] }),
        );
      }
      ctx.txs.push(...(load.hashes.slice(-2) as Hex[]));
      // The leader's next state, then both replicas at it.
      const pending = await waitFor(
        async () => {
          const p = await call(cluster.leader.url, 'eth_getBlockByNumber', ['pending', false]);
          return pendingKey(p) !== last ? p : null;
        },
        5_000,
        'the leader to move to its next pre-confirmation',
      );
      const key = pendingKey(pending);
      for (const url of urls.slice(1)) {
        // At or past it: under load a replica can apply two pre-confirmations between polls
        // (a round where a node moved on is skipped below).
        await waitFor(async () => atOrPast(pendingKey(await call(url, 'eth_getBlockByNumber', ['pending', false])), key), 5_000, `${url} to show ${key}`, 5);
      }
      last = key;
      const head = Number(pending.number) - 1;
      // `safe` is each node's own durable head: a sealed block can be on disk on a replica
      // before the leader's batched commit lands. Compare where all agree.
      const safe = async (): Promise<string[]> => Promise.all(urls.map(async (u) => (await call(u, 'eth_getBlockByNumber', ['safe', false])).number as string));
      const safeBefore = await safe();
      if (new Set(safeBefore).size > 1) continue;
      const body = JSON.stringify(reads(head, pending.parentHash, ctx).map(([method, params], id) => ({ jsonrpc: '2.0', id, method, params })));
      const answers = await Promise.all(urls.map((u) => rawPost(u, body)));
      const keys = answers.map((a) => [a.json[0].result, a.json[a.json.length - 1].result].map(pendingKey));
      if (keys.some(([first, end]) => first !== key || end !== key)) continue; // a node moved on while answering
      // What a replica forwards (pool reads) is answered by the leader when it gets there:
      // compare only when the leader was still at this state after every answer.
      if (pendingKey(await call(cluster.leader.url, 'eth_getBlockByNumber', ['pending', false])) !== key) continue;
      if ((await safe()).some((n) => n !== safeBefore[0])) continue;
      const [leader, ...replicas] = answers;
      for (const r of replicas) {
        if (r.text !== leader!.text) {
          const i = leader!.json.findIndex((m: unknown, j: number) => JSON.stringify(m) !== JSON.stringify(r.json[j]));
          expect.fail(
            `state ${key}, request ${JSON.stringify(JSON.parse(body)[i])}:\nleader  ${JSON.stringify(leader!.json[i]).slice(0, 600)}\nreplica ${JSON.stringify(r.json[i]).slice(0, 600)}`,
          );
        }
      }
      if (key.endsWith('.0')) compared.opened++;
      else compared.preconfs++;
    }
    expect(compared.opened).toBeGreaterThanOrEqual(2);
    expect(compared.preconfs).toBeGreaterThanOrEqual(8);
    await load.stop();
    expect(load.sent).toBeGreaterThan(20);
  }, 120_000);

  it('deliver the same subscription payloads as the leader', async () => {
    const [leader, ...replicas] = sockets;
    // Settle: every node has delivered the leader's newest sealed block.
    const newest = Number(await call(cluster.leader.url, 'eth_blockNumber'));
    for (const ws of sockets)
      await waitFor(
        () => ws.notifications.some((n) => n.result?.number !== undefined && Number(n.result.number) >= newest && n.result.hash),
        10_000,
        'the newest head on every node',
      );
    const byKind = (ws: RawWs): Map<string, string> => {
      const out = new Map<string, string>();
      const subs = subscriptions.get(ws)!;
      ws.notifications.forEach((n) => {
        const r = n.result;
        const kind = subs.indexOf(n.subscription);
        const id =
          r.preconfIndex !== undefined
            ? `${r.number}.${r.preconfIndex}`
            : r.logIndex !== undefined
              ? `${r.transactionHash}.${r.logIndex}.${r.blockHash}`
              : (r.hash ?? r.number);
        out.set(`${kind}:${id}`, canonical(r));
      });
      return out;
    };
    const theirs = byKind(leader!);
    for (const ws of replicas) {
      const ours = byKind(ws);
      let shared = 0;
      for (const [key, payload] of ours) {
        if (!theirs.has(key)) continue;
        shared++;
        expect(payload, key).toBe(theirs.get(key));
      }
      // Nearly everything the replica delivered, the leader delivered too (the first
      // messages differ only by when each socket subscribed).
      expect(shared).toBeGreaterThan(ours.size * 0.9);
      expect(shared).toBeGreaterThan(50);
    }
  });
});
