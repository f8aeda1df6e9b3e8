// Seeded fuzzing of every method (bad input must answer a clear error, never -32603, a crash
// or a hang): valid requests, mutated at random (parameters swapped for values of other types,
// hex strings cut, stretched or garbled, arrays and objects grown, members dropped or added,
// ids of every kind), sent alone, in batches and over WebSocket. Every answer must be a
// JSON-RPC envelope carrying the request's id, no bad input may yield -32603, and the node
// must stay up with its memory bounded.
//
// FUZZ_SEED picks the sequence (the seed in use is in the test's name, to replay a failure);
// FUZZ_MS bounds the time (default 30 s, at most a minute).

import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { createPublicClient, createWalletClient, http, parseEther } from 'viem';
import { foundry } from 'viem/chains';
import { buildMethods } from '../../src/methods/index.js';
import type { Chain } from '../../src/native.js';
import { devAccount, rawPost } from '../helpers/node.js';
import { spawnNode, type NodeProcess } from '../helpers/process.js';

const SEED = Number(process.env.FUZZ_SEED ?? 26);
const BUDGET_MS = Math.min(60_000, Number(process.env.FUZZ_MS ?? 30_000));

/** mulberry32: small, fast, and the same sequence for the same seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Request {
  text: string;
  /** The id's JSON text the answer must carry; undefined: a notification (no answer). */
  id?: string;
}

/** The node's default --max-body-bytes. */
const MAX_BODY_BYTES = 5 * 1024 * 1024;

describe(`fuzzing every method (FUZZ_SEED=${SEED})`, () => {
  // The node runs as its own process, with V8's heap held to what a production node would
  // be given: its memory is measured alone (the fuzzer's parsed answers are not), and a
  // node that needed more would die, which the test sees.
  let node: NodeProcess;
  const t = { node: { url: '', wsUrl: '' } };
  const seeds: Record<string, unknown[][]> = {};
  beforeAll(async () => {
    node = await spawnNode(['--ephemeral'], undefined, { NODE_OPTIONS: '--max-old-space-size=512' });
    t.node = { url: node.url, wsUrl: node.url.replace('http', 'ws') };
    const transport = http(node.url, { retryCount: 0 });
    const publicClient = createPublicClient({ chain: foundry, transport, pollingInterval: 50 });
    const wallet = createWalletClient({ chain: foundry, transport, account: devAccount(1) });
    const hash = await wallet.sendTransaction({
      to: '0x00000000000000000000000000000000000000aa',
      value: parseEther('1'),
      chain: foundry,
      account: wallet.account,
    });
    await publicClient.waitForTransactionReceipt({ hash });
    const block = await publicClient.getBlock({ blockTag: 'latest' });
    const A = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
    const B = '0x00000000000000000000000000000000000000aa';
    const call = { from: A, to: B, data: '0x12345678', value: '0x1', gas: '0x5208' };
    const filter = { fromBlock: '0x0', toBlock: 'latest', address: B, topics: [null, [block.hash]] };
    const raw = await wallet.signTransaction({
      to: B,
      value: 1n,
      gas: 21000n,
      maxFeePerGas: 10n ** 10n,
      maxPriorityFeePerGas: 1n,
      nonce: 500,
      chain: foundry,
      account: wallet.account,
    });
    Object.assign(seeds, {
      eth_getBalance: [[A, 'latest']],
      eth_getTransactionCount: [[A, 'pending']],
      eth_getCode: [[B, '0x1']],
      eth_getStorageAt: [[B, '0x0', 'latest']],
      eth_getProof: [[B, ['0x0', '0x1'], 'latest']],
      eth_call: [[call, 'latest', { [B]: { balance: '0x10', state: { ['0x' + '0'.repeat(64)]: '0x' + '1'.padStart(64, '0') } } }, { number: '0x10' }]],
      eth_estimateGas: [[call, 'pending']],
      eth_createAccessList: [[call, 'latest']],
      eth_simulateV1: [
        [{ blockStateCalls: [{ calls: [call], stateOverrides: { [A]: { balance: '0xffffffffffff' } } }], validation: false, traceTransfers: true }, 'latest'],
      ],
      eth_getBlockByNumber: [
        ['latest', true],
        ['0x1', false],
      ],
      eth_getBlockByHash: [[block.hash, false]],
      eth_getBlockReceipts: [['latest']],
      eth_getTransactionByHash: [[hash]],
      eth_getTransactionReceipt: [[hash]],
      eth_getBlockTransactionCountByNumber: [['latest']],
      eth_getBlockTransactionCountByHash: [[block.hash]],
      eth_getTransactionByBlockNumberAndIndex: [['latest', '0x0']],
      eth_getTransactionByBlockHashAndIndex: [[block.hash, '0x0']],
      eth_getUncleCountByBlockNumber: [['latest']],
      eth_getUncleCountByBlockHash: [[block.hash]],
      eth_sendRawTransaction: [[raw]],
      eth_sendRawTransactionSync: [[raw, 50]],
      eth_sendTransaction: [[{ from: A, to: B, value: '0x1' }]],
      eth_feeHistory: [['0x4', 'latest', [10, 50, 90]]],
      eth_getLogs: [[filter]],
      preconf_transactionStatus: [[hash]],
      debug_traceCall: [[call, 'latest', { tracer: 'callTracer', tracerConfig: { onlyTopCall: true }, timeout: '1s' }]],
      debug_traceTransaction: [[hash, { disableStack: true }]],
      debug_traceBlockByNumber: [['latest', { tracer: 'prestateTracer' }]],
      debug_traceBlockByHash: [[block.hash, {}]],
      txpool_contentFrom: [[A]],
      eth_subscribe: [['newHeads'], ['logs', { address: B }]],
      eth_unsubscribe: [['0x1']],
    });
  });
  afterAll(async () => {
    if (node?.child.exitCode !== null) console.log(node?.output().slice(-3000));
    await node?.kill('SIGKILL');
  });

  it('answers every mutated request with an envelope and its id, never -32603, and stays up', async () => {
    const random = rng(SEED);
    const int = (n: number) => Math.floor(random() * n);
    const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
    // Every method name the registry has (its handlers are not called here).
    const methods = [
      ...buildMethods({
        chain: {} as Chain,
        chainId: 31337,
        clientVersion: '',
        publicEndpoint: false,
        preconf: true,
        hub: undefined as never,
        dev: false,
      }).keys(),
    ];
    const hex = (bytes: number) => `0x${Array.from({ length: bytes }, () => int(256).toString(16).padStart(2, '0')).join('')}`;
    const scalar = (): unknown =>
      pick<() => unknown>([
        () => null,
        () => true,
        () => int(2 ** 31) - 2 ** 30,
        () => random() * 1e20,
        () => 2 ** 64 + int(1000),
        () => -0.5,
        () => '',
        () => '0x',
        () => hex(int(40)),
        () => hex(20),
        () => hex(32),
        () => '0x' + 'f'.repeat(int(80)),
        () => pick(['latest', 'pending', 'safe', 'finalized', 'earliest', 'Latest', 'nope']),
        () => '\u0000\ud800' + 'x'.repeat(int(20)),
        () => '0X' + hex(4).slice(2).toUpperCase(),
      ])();
    const value = (depth: number): unknown => {
      if (depth > 3 || random() < 0.6) return scalar();
      if (random() < 0.5) return Array.from({ length: int(6) }, () => value(depth + 1));
      return Object.fromEntries(
        Array.from({ length: int(5) }, () => [
          pick(['to', 'from', 'data', 'gas', 'value', 'type', 'blockHash', 'topics', 'address', 'x', hex(20)]),
          value(depth + 1),
        ]),
      );
    };
    const mutate = (v: unknown, depth = 0): unknown => {
      const r = random();
      if (r < 0.15 || depth > 4) return value(depth);
      if (typeof v === 'string' && v.startsWith('0x')) {
        return pick<() => unknown>([
          () => v.slice(0, int(v.length)),
          () => v + 'ab'.repeat(1 + int(40)),
          () => v.slice(2),
          () => v.replace(/[0-9a-f]/, 'g'),
          () => v.toUpperCase(),
          () => '0x0' + v.slice(2),
          () => BigInt(v.length > 2 && /^0x[0-9a-fA-F]+$/.test(v) ? v : '0x1').toString(),
        ])();
      }
      if (Array.isArray(v)) {
        const out = v.map((x) => (random() < 0.3 ? mutate(x, depth + 1) : x));
        if (random() < 0.2) out.splice(int(out.length + 1), 0, value(depth + 1));
        if (random() < 0.2) out.splice(int(out.length), 1);
        if (random() < 0.05) return Array.from({ length: 200 + int(2000) }, () => out[0] ?? 0);
        return out;
      }
      if (typeof v === 'object' && v !== null) {
        const out: Record<string, unknown> = { ...(v as Record<string, unknown>) };
        for (const k of Object.keys(out)) {
          if (random() < 0.3) out[k] = mutate(out[k], depth + 1);
          else if (random() < 0.1) delete out[k];
        }
        if (random() < 0.2)
          out[pick(['gas', 'type', 'authorizationList', 'blobVersionedHashes', 'input', 'stateDiff', 'tracer', 'timeout', 'limit', 'blockHash', '__proto__'])] =
            value(depth + 1);
        return out;
      }
      return value(depth);
    };
    let nextId = 0;
    const request = (): Request => {
      const method = random() < 0.03 ? pick(['', 'eth_nope', 'constructor', '__proto__', 'toString']) : pick(methods);
      const base = seeds[method]?.length ? pick(seeds[method]!) : [];
      const params = random() < 0.1 ? base : (mutate(base) as unknown);
      const idKind = int(10);
      const id =
        idKind < 6
          ? String(nextId++)
          : idKind < 7
            ? JSON.stringify(`s${nextId++}`)
            : idKind < 8
              ? pick(['9007199254740993', '1e400', '123456789012345678901234567890', '-1.5'])
              : idKind < 9
                ? 'null'
                : undefined;
      const body: string[] = ['"jsonrpc":"2.0"', `"method":${JSON.stringify(method)}`];
      if (random() > 0.05) body.push(`"params":${JSON.stringify(params) ?? 'null'}`);
      if (id !== undefined) body.push(`"id":${id}`);
      for (let i = body.length - 1; i > 0; i--) {
        const j = int(i + 1);
        [body[i], body[j]] = [body[j]!, body[i]!];
      }
      return { text: `{${body.join(',')}}`, id };
    };

    /** The raw id text of each answer object (ids may not survive JSON.parse). */
    const answerIds = (text: string): string[] => [...text.matchAll(/\{"jsonrpc":"2\.0","id":([^,]*),"(?:result|error)"/g)].map((m) => m[1]!);
    const check = (sent: Request[], text: string, status: number, where: string) => {
      const label = `${where}: ${sent.map((s) => s.text.slice(0, 300)).join('\n')}`;
      const expected = sent.filter((s) => s.id !== undefined).map((s) => s.id!);
      if (text === '') {
        expect(expected, label).toEqual([]);
        return;
      }
      expect([200, 413, 429], label).toContain(status);
      const parsed = JSON.parse(text);
      if (status === 413) {
        // A body over --max-body-bytes (the fuzzer grows arrays) is refused before it is read.
        expect(parsed.error.code, label).toBe(-32600);
        return;
      }
      const answers = Array.isArray(parsed) ? parsed : [parsed];
      for (const a of answers) {
        expect(a.jsonrpc, label).toBe('2.0');
        expect('result' in a !== 'error' in a, label).toBe(true);
        if (a.error) {
          expect(a.error.code, `${label}\n-> ${a.error.message}`).not.toBe(-32603);
          expect(typeof a.error.message).toBe('string');
        }
      }
      // Each request with an id is answered with exactly that id; an invalid notification
      // may be answered too, as JSON-RPC 2.0 wants, with id null and -32600.
      const got = answerIds(text);
      for (const id of expected) {
        const at = got.indexOf(id);
        expect(at, `${label}\nid ${id} missing from ${text.slice(0, 300)}`).not.toBe(-1);
        got.splice(at, 1);
      }
      for (const id of got) expect(id, label).toBe('null');
    };

    /** A POST; `null` when a body over the node's limit was cut off by the node closing the
     *  connection before it was all sent (it answers 413 when it has read the headers first). */
    const post = async (body: string): Promise<{ status: number; text: string } | null> => {
      try {
        return await rawPost(t.node.url, body);
      } catch (e) {
        if (Buffer.byteLength(body) > MAX_BODY_BYTES) return null;
        throw e;
      }
    };
    const ws = new WebSocket(t.node.wsUrl);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const wsReplies: string[] = [];
    ws.on('message', (d) => {
      const text = d.toString();
      // Subscriptions the fuzzer opened notify at any time: only answers are checked.
      if (!text.startsWith('{"jsonrpc":"2.0","method":"eth_subscription"')) wsReplies.push(text);
    });
    const status = (): string => readFileSync(`/proc/${node.child.pid}/status`, 'utf8');
    const kib = (field: string): number => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status())?.[1]) * 1024;
    const rssBefore = kib('VmRSS');
    const started = performance.now();
    let sent = 0;
    while (performance.now() - started < BUDGET_MS) {
      const shape = int(10);
      if (shape < 5) {
        const r = request();
        const res = await post(r.text);
        if (res) check([r], res.text, res.status, 'single');
        sent++;
      } else if (shape < 8) {
        const rs = Array.from({ length: 1 + int(20) }, request);
        const res = await post(`[${rs.map((r) => r.text).join(',')}]`);
        if (res) check(rs, res.text, res.status, 'batch');
        sent += rs.length;
      } else {
        const r = request();
        // Over the socket, answers are matched by arrival: only requests with ids.
        if (r.id === undefined) continue;
        const before = wsReplies.length;
        ws.send(r.text);
        await expect.poll(() => wsReplies.length, { timeout: 30_000, interval: 2 }).toBeGreaterThan(before);
        check([r], wsReplies.splice(before, 1)[0]!, 200, 'ws');
        sent++;
      }
    }
    ws.close();
    expect(sent).toBeGreaterThan(200);
    // The node's peak resident memory (VmHWM) over the run.
    expect(node.child.exitCode, node.output().slice(-2000)).toBeNull();
    console.log(`node peak RSS growth ${Math.round((kib('VmHWM') - rssBefore) / 1048576)} MiB over ${sent} requests`);
    expect(kib('VmHWM') - rssBefore).toBeLessThan(1024 * 1024 * 1024);
    const health = await fetch(`${t.node.url}/health`);
    expect(health.status).toBe(200);
  });
});
