// The node under test, driven as a user would: `preconf-node import` for the chain, then
// `preconf-node --no-build --profile geth` as a child process on a free port.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { keccak256 } from 'viem';

export class NodeError extends Error {
  constructor(
    readonly kind: 'not-built' | 'import-failed' | 'start-failed' | 'bad-chain-file',
    message: string,
    readonly output = '',
  ) {
    super(message);
    this.name = 'NodeError';
  }
}

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const NODE_BIN = join(repoRoot, 'bin', 'preconf-node.cjs');

/** The command runs dist/ (built by `npm install`/`npm run build:ts`); say so instead of a stack trace. */
export function checkBuilt(): void {
  if (!existsSync(join(repoRoot, 'dist', 'main.js'))) throw new NodeError('not-built', 'dist/main.js is missing: run "npm run build:ts" (npm install does it)');
}

// --- the chain file ---------------------------------------------------------------------

interface RlpItem {
  list: boolean;
  /** Payload start and end (exclusive). */
  start: number;
  end: number;
  /** Start of the item's own prefix. */
  at: number;
}

function rlpItem(buf: Uint8Array, at: number, limit: number): RlpItem {
  const b = buf[at];
  if (b === undefined || at >= limit) throw new NodeError('bad-chain-file', `RLP item expected at byte ${at}`);
  let start: number;
  let len: number;
  const list = b >= 0xc0;
  if (b < 0x80) return { list: false, start: at, end: at + 1, at };
  const short = list ? 0xc0 : 0x80;
  if (b - short <= 55) {
    start = at + 1;
    len = b - short;
  } else {
    const lenOfLen = b - short - 55;
    len = 0;
    for (let i = 1; i <= lenOfLen; i++) len = len * 256 + (buf[at + i] ?? 0);
    start = at + 1 + lenOfLen;
  }
  if (start + len > limit) throw new NodeError('bad-chain-file', `RLP item at byte ${at} runs past its container`);
  return { list, start, end: start + len, at };
}

export interface ChainHead {
  blocks: number;
  number: number;
  hash: string;
}

/** Counts the concatenated blocks of a chain.rlp and returns the last one's number and hash. */
export function chainHead(file: string): ChainHead {
  const buf = readFileSync(file);
  let at = 0;
  let blocks = 0;
  let last: RlpItem | null = null;
  while (at < buf.length) {
    const block = rlpItem(buf, at, buf.length);
    if (!block.list) throw new NodeError('bad-chain-file', `${file}: byte ${at} does not start a block (an RLP list)`);
    last = block;
    blocks++;
    at = block.end;
  }
  if (last === null) throw new NodeError('bad-chain-file', `${file} holds no block`);
  const header = rlpItem(buf, last.start, last.end);
  // Header fields: parentHash, uncleHash, coinbase, stateRoot, txRoot, receiptRoot, bloom,
  // difficulty, number, ...
  let field = header.start;
  for (let i = 0; i < 8; i++) field = rlpItem(buf, field, header.end).end;
  const num = rlpItem(buf, field, header.end);
  let number = 0;
  for (let i = num.start; i < num.end; i++) number = number * 256 + buf[i]!;
  return { blocks, number, hash: keccak256(buf.subarray(header.at, header.end)) };
}

// --- processes --------------------------------------------------------------------------

const tail = (s: string, n = 4000): string => (s.length > n ? `…${s.slice(-n)}` : s);

export async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.once('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr !== null ? ok(addr.port) : fail(new Error('no port'))));
    });
  });
}

export interface ImportOptions {
  genesis: string;
  datadir: string;
  blocks: string;
  /** Called with the command's output as it comes (progress lines). */
  onOutput?: (chunk: string) => void;
  timeoutMs?: number;
}

/** Runs `preconf-node import`; resolves when it exits 0, throws NodeError otherwise. */
export async function importChain(o: ImportOptions): Promise<void> {
  const args = [NODE_BIN, 'import', '--genesis', o.genesis, '--datadir', o.datadir, o.blocks];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const collect = (d: Buffer): void => {
    out += d.toString();
    o.onOutput?.(d.toString());
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 600_000);
  const code = await new Promise<number | string>((ok) => {
    child.once('error', (e) => ok(e.message));
    child.once('exit', (c, s) => ok(c ?? s ?? -1));
  });
  clearTimeout(timer);
  if (code !== 0) throw new NodeError('import-failed', `preconf-node import exited with ${code}`, tail(out));
}

export interface RunningNode {
  url: string;
  child: ChildProcess;
  output(): string;
  /** Exit code or signal once the process has ended, else null. */
  exitStatus(): number | string | null;
  stop(): Promise<void>;
}

export interface StartOptions {
  genesis: string;
  datadir: string;
  readyTimeoutMs?: number;
}

/** Starts the node serving `datadir` and resolves once it answers JSON-RPC. */
export async function startNode(o: StartOptions): Promise<RunningNode> {
  const port = await freePort();
  const args = [NODE_BIN, '--genesis', o.genesis, '--datadir', o.datadir, '--no-build', '--profile', 'geth', '--port', String(port), '--quiet'];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let status: number | string | null = null;
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((ok) => {
    child.once('error', (e) => {
      status = e.message;
      ok();
    });
    child.once('exit', (c, s) => {
      status = c ?? s ?? -1;
      ok();
    });
  });
  const node: RunningNode = {
    url: `http://127.0.0.1:${port}`,
    child,
    output: () => out,
    exitStatus: () => status,
    async stop() {
      if (status !== null) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
  const deadline = Date.now() + (o.readyTimeoutMs ?? 60_000);
  for (;;) {
    if (status !== null) throw new NodeError('start-failed', `preconf-node exited with ${status} before answering`, tail(out));
    if (await answers(node.url)) return node;
    if (Date.now() > deadline) {
      await node.stop();
      throw new NodeError('start-failed', `preconf-node did not answer on ${node.url} within ${o.readyTimeoutMs ?? 60_000} ms`, tail(out));
    }
    // Poll again once the process had a moment, or at once if it exits meanwhile.
    await Promise.race([exited, new Promise((r) => setTimeout(r, 100))]);
  }
}

/** True once the endpoint gives a JSON-RPC answer to eth_chainId. */
async function answers(url: string): Promise<boolean> {
  try {
    const r = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":0,"method":"eth_chainId","params":[]}',
      signal: AbortSignal.timeout(2_000),
    });
    const body = (await r.json()) as { result?: unknown };
    return typeof body.result === 'string';
  } catch {
    return false;
  }
}

/** The node's latest block (number and hash), or null when it cannot say. */
export async function servedHead(url: string): Promise<{ number: number; hash: string } | null> {
  try {
    const r = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":0,"method":"eth_getBlockByNumber","params":["latest",false]}',
      signal: AbortSignal.timeout(5_000),
    });
    const body = (await r.json()) as { result?: { number?: string; hash?: string } | null };
    const b = body.result;
    if (!b || typeof b.number !== 'string' || typeof b.hash !== 'string') return null;
    return { number: Number(BigInt(b.number)), hash: b.hash.toLowerCase() };
  } catch {
    return null;
  }
}
