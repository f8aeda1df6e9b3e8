// `npm run bench:instructions`: CPU instructions per request, by request class, for the floor
// (benches/floor-server.ts), this checkout's node and any --baseline (a built checkout, or a
// git ref built in a worktree: baseline.ts). Wall-clock req/s on this 2-core VM moves with
// whatever else runs; an instruction count does not. Each server runs under valgrind's
// callgrind (every thread counted: the event loop, the work pools, the builder); after a
// warm-up of each class the counters are zeroed, a fixed number of requests is sent one at a
// time over one keep-alive connection, and the counts are dumped. The background (builder
// ticks, timers) is measured idle for a while and its rate subtracted for the time each class
// took. Every answer is checked: an error costs less than an answer and would flatter a build.
//
//   npm run bench:instructions -- --baseline 86ee648 --requests 2000 --out /tmp/i.json
//   npm run bench:instructions -- --keep /tmp/cg   # keep the dumps (benches/stages.ts reads them)

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '../test/helpers/anvil.js';
import { resolveBaseline } from './baseline.js';
import { balanceOfData, balanceSlot, deployToken, holders } from './fixtures.js';
import { pinnedCommand } from './pinning.js';
import { checkout } from './targets.js';
import { ROOT, sleep } from './util.js';

const log = (msg: string) => process.stderr.write(`[instructions] ${msg}\n`);

export interface RequestClass {
  name: string;
  /** Requests per body (a batch's items): counts are also given per item. */
  items: number;
  bodies: string[];
}

/** The classes of issue-sized reads, over 64 holders each. */
export function requestClasses(token: string): RequestClass[] {
  const hs = holders();
  const one = (method: string, params: (a: string) => unknown[]) => hs.map((a, i) => JSON.stringify({ jsonrpc: '2.0', id: i + 1, method, params: params(a) }));
  const call = (a: string) => ({ to: token, data: balanceOfData(a as `0x${string}`) });
  return [
    { name: 'eth_getBalance', items: 1, bodies: one('eth_getBalance', (a) => [a, 'latest']) },
    { name: 'eth_getStorageAt', items: 1, bodies: one('eth_getStorageAt', (a) => [token, balanceSlot(a as `0x${string}`), 'latest']) },
    { name: 'eth_getCode', items: 1, bodies: one('eth_getCode', () => [token, 'latest']) },
    { name: 'eth_call latest', items: 1, bodies: one('eth_call', (a) => [call(a), 'latest']) },
    { name: 'eth_call pending', items: 1, bodies: one('eth_call', (a) => [call(a), 'pending']) },
    {
      name: 'eth_simulateV1 1×1',
      items: 1,
      bodies: one('eth_simulateV1', (a) => [{ blockStateCalls: [{ calls: [call(a)] }] }, 'latest']),
    },
    {
      name: 'batch 100 eth_getBalance',
      items: 100,
      bodies: Array.from({ length: 8 }, (_, k) =>
        JSON.stringify(
          Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'eth_getBalance', params: [hs[(k * 8 + i) % hs.length], 'latest'] })),
        ),
      ),
    },
  ];
}

// ---- a sequential JSON-RPC client that checks every answer ----

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function post(url: string, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** uWS closes a keep-alive connection after 10 s without a request; under valgrind the pauses
 *  between phases can be that long, and a request sent on such a socket meets its close. */
async function postRetrying(url: string, body: string): Promise<string> {
  try {
    return await post(url, body);
  } catch (e) {
    if ((e as { code?: string }).code !== 'ECONNRESET') throw e;
    return post(url, body);
  }
}

async function send(url: string, bodies: string[], n: number, check: boolean): Promise<void> {
  for (let i = 0; i < n; i++) {
    const text = await postRetrying(url, bodies[i % bodies.length]!);
    if (check && (text.includes('"error"') || !text.includes('"result"'))) throw new Error(`an answer with an error: ${text.slice(0, 300)}`);
  }
}

// ---- callgrind ----

interface Traced {
  name: string;
  url: string;
  pid: number;
  outDir: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

function callgrindControl(pid: number, flag: string): void {
  const r = spawnSyncText('callgrind_control', [flag, String(pid)]);
  if (!r.includes('OK')) throw new Error(`callgrind_control ${flag} ${pid}: ${r}`);
}

function spawnSyncText(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return `${r.stdout ?? ''}${r.stderr ?? ''}`;
}

/** Threads that run on their own clock whatever the requests: the builder and the committer.
 *  Their dumps are left out (the names match older builds too, e.g. 86ee648's); every other thread (the event loop, the work pools, V8's
 *  helpers) is the requests'. */
const BACKGROUND = /preconf_chain::builder::(Builder::(run|land)|tick::|commit::)|preconf_chain::commit::commit_until_written/;

/** The newest dump's instruction count over the request threads (one file per thread). */
function lastDump(t: Traced, before: Set<string>): { ir: number; files: string[]; background: number } {
  const files = readdirSync(t.outDir).filter((f) => f.startsWith(`cg.${t.pid}.out.`) && !before.has(f));
  if (files.length === 0) throw new Error(`no new dump in ${t.outDir}`);
  let ir = 0;
  let background = 0;
  const kept: string[] = [];
  for (const f of files) {
    const file = join(t.outDir, f);
    const text = readFileSync(file, 'utf8');
    const m = /^summary:\s+(\d+)/m.exec(text) ?? /^totals:\s+(\d+)/m.exec(text);
    const n = m ? Number(m[1]) : 0;
    if (BACKGROUND.test(text)) {
      background += n;
      rmSync(file);
    } else {
      ir += n;
      kept.push(file);
    }
  }
  return { ir, files: kept, background };
}

/** Counts the instructions the server spends while `work` runs. */
async function counted(t: Traced, work: () => Promise<void>): Promise<{ ir: number; seconds: number; files: string[]; background: number }> {
  const before = new Set(readdirSync(t.outDir));
  callgrindControl(t.pid, '-z');
  const t0 = performance.now();
  await work();
  const seconds = (performance.now() - t0) / 1000;
  callgrindControl(t.pid, '-d');
  return { ...lastDump(t, before), seconds };
}

async function startTraced(name: string, args: string[], cwd: string, core: number, outDir: string, perfMap: boolean): Promise<Traced> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const vg = [
    '--tool=callgrind',
    '--separate-threads=yes',
    `--callgrind-out-file=${join(outDir, 'cg.%p.out')}`,
    process.execPath,
    ...(perfMap ? ['--perf-basic-prof'] : []),
    ...args.map((a) => a.replace('{port}', String(port))),
  ];
  const [cmd, cmdArgs] = pinnedCommand([core], 'valgrind', vg);
  const child = spawn(cmd, cmdArgs, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const deadline = Date.now() + 1_200_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited early:\n${out.slice(-2000)}`);
    if (Date.now() > deadline) {
      child.kill('SIGTERM');
      throw new Error(`${name} did not start under valgrind:\n${out.slice(-2000)}`);
    }
    try {
      await post(url, '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}');
      break;
    } catch {
      await sleep(500);
    }
  }
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return { name, url, pid: child.pid!, outDir, child, stop };
}

// ---- the run ----

export interface ClassCount {
  name: string;
  items: number;
  requests: number;
  /** Instructions per request (per HTTP body), the idle rate subtracted. */
  perRequest: number;
  /** The same per batch item. */
  perItem: number;
  /** Per item, each pass. */
  passes: number[];
  seconds: number;
  idleShare: number;
  /** The builder's and the committer's instructions meanwhile, left out, as a share of all. */
  backgroundShare: number;
  /** With --keep: the dump's files, one per request thread. */
  dump?: string[];
}

export interface TargetCount {
  name: string;
  dir: string;
  commit: string;
  idlePerSecond: number;
  /** With --keep: the idle spell's dump, for benches/stages.ts's background. */
  idleDump?: { files: string[]; seconds: number };
  classes: ClassCount[];
}

interface Target {
  name: string;
  kind: 'floor' | 'node';
  dir: string;
}

async function measureTarget(target: Target, o: RunOptions, outDir: string): Promise<TargetCount> {
  const args =
    target.kind === 'floor'
      ? ['--import', 'tsx', join(ROOT, 'benches', 'floor-server.ts'), '{port}']
      : [join(target.dir, 'bin', 'preconf-node.cjs'), '--ephemeral', '--port', '{port}', '--quiet', ...o.nodeArgs];
  log(`${target.name}: starting under callgrind`);
  const t = await startTraced(target.name, args, target.dir, o.core, outDir, o.perfMap);
  try {
    const token = target.kind === 'floor' ? '0x00000000000000000000000000000000000000aa' : await deployToken(t.url);
    const classes = requestClasses(token).filter((c) => o.classes === null || o.classes.some((x) => c.name.startsWith(x)));
    // V8 compiles the request path's functions over the first thousands of requests (and on
    // other threads): a long warm-up of every class first, so that no class pays for it.
    for (const c of classes) await send(t.url, c.bodies, Math.max(1, Math.round(o.warmup / c.items)), target.kind === 'node');
    // Each class is counted in `rounds` passes over all of them and the median pass kept: a
    // pass can catch one major GC more or less than another. Every pass is reported.
    const passes: { ir: number; seconds: number; n: number; files: string[]; background: number }[][] = classes.map(() => []);
    for (let round = 0; round < o.rounds; round++) {
      for (const [i, c] of classes.entries()) {
        const n = Math.max(1, Math.round(o.requests / c.items));
        await send(t.url, c.bodies, Math.max(1, Math.round(o.warmup / 4 / c.items)), target.kind === 'node');
        const r = await counted(t, () => send(t.url, c.bodies, n, target.kind === 'node'));
        passes[i]!.push({ ...r, n });
      }
    }
    // The background (builder ticks, timers) per second of wall time under valgrind, measured
    // last: an idle spell makes V8 reduce its heap at the next requests.
    const idle = await counted(t, () => sleep(o.idleSeconds * 1000));
    const idlePerSecond = idle.ir / idle.seconds;
    if (!o.keep) for (const f of idle.files) rmSync(f);
    const idleDump = o.keep ? { files: idle.files, seconds: idle.seconds } : undefined;
    const out: ClassCount[] = [];
    for (const [i, c] of classes.entries()) {
      const per = passes[i]!.map((p) => ({ ...p, perRequest: (p.ir - idlePerSecond * p.seconds) / p.n }));
      const best = [...per].sort((a, b) => a.perRequest - b.perRequest)[Math.floor((per.length - 1) / 2)]!;
      const background = idlePerSecond * best.seconds;
      out.push({
        name: c.name,
        items: c.items,
        requests: best.n,
        perRequest: best.perRequest,
        perItem: best.perRequest / c.items,
        passes: per.map((p) => Math.round(p.perRequest / c.items)),
        seconds: best.seconds,
        idleShare: background / best.ir,
        dump: o.keep ? best.files : undefined,
        backgroundShare: best.background / (best.background + best.ir),
      });
      if (!o.keep) for (const p of per) for (const f of p.files) rmSync(f);
      log(
        `${target.name} ${c.name}: ${per.map((p) => Math.round(p.perRequest).toLocaleString('en-US')).join(' / ')} instructions per request (${best.n} requests, ${best.seconds.toFixed(1)} s, idle rate ${((100 * background) / best.ir).toFixed(1)} % of it, builder and committer ${((100 * best.background) / (best.background + best.ir)).toFixed(1)} % left out)`,
      );
    }
    return { name: target.name, dir: target.dir, commit: checkout(target.dir).commit, idlePerSecond, idleDump, classes: out };
  } finally {
    await t.stop();
  }
}

interface RunOptions {
  requests: number;
  warmup: number;
  idleSeconds: number;
  rounds: number;
  core: number;
  keep: boolean;
  perfMap: boolean;
  classes: string[] | null;
  nodeArgs: string[];
}

const k = (n: number | undefined) => (n === undefined ? '—' : `${(n / 1000).toFixed(1)} k`);

export function renderCounts(targets: TargetCount[]): string {
  const names = targets[0]!.classes.map((c) => c.name);
  const floor = targets.find((t) => t.name === 'floor');
  const nodes = targets.filter((t) => t !== floor);
  const head = [
    'class (instructions per request; batch: per item)',
    ...targets.map((t) => t.name),
    ...(floor ? nodes.map((t) => `floor ÷ ${t.name}`) : []),
    ...nodes.slice(1).map((t) => `${nodes[0]!.name} ÷ ${t.name}`),
  ];
  const rows = names.map((name) => {
    const per = (t: TargetCount) => t.classes.find((c) => c.name === name)?.perItem;
    const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? '—' : (a / b).toFixed(2));
    return [
      name,
      ...targets.map((t) => k(per(t))),
      ...(floor ? nodes.map((t) => ratio(per(floor), per(t))) : []),
      ...nodes.slice(1).map((t) => ratio(per(nodes[0]!), per(t))),
    ];
  });
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n') + '\n';
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      baseline: { type: 'string', multiple: true, default: [] },
      requests: { type: 'string', default: '5000' },
      warmup: { type: 'string', default: '3000' },
      'idle-seconds': { type: 'string', default: '5' },
      rounds: { type: 'string', default: '3' },
      core: { type: 'string', default: '0' },
      classes: { type: 'string' },
      // Fewer builder ticks under valgrind (they are background, measured idle and
      // subtracted, but the less of it the less noise); the reads do not depend on them.
      'node-args': { type: 'string', default: '--preconf-interval-ms 1000 --block-time-ms 5000' },
      'no-floor': { type: 'boolean', default: false },
      'no-current': { type: 'boolean', default: false },
      'perf-map': { type: 'boolean', default: false },
      keep: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`npm run bench:instructions -- [--baseline DIR|REF]... [--requests N] [--warmup N] [--classes a,b]
  [--node-args "..."] [--no-floor] [--no-current] [--keep DIR] [--perf-map] [--out FILE]

Instructions per request (callgrind, every thread of the server) for the floor, this node and
each baseline (a built checkout, or a commit built in a worktree under /tmp), class by class.
--keep DIR keeps the callgrind dumps (with --perf-map, V8's /tmp/perf-PID.map names the JIT code)
for benches/stages.ts.\n`);
    return;
  }
  const o: RunOptions = {
    requests: Number(values.requests),
    warmup: Number(values.warmup),
    idleSeconds: Number(values['idle-seconds']),
    rounds: Math.max(1, Number(values.rounds)),
    core: Number(values.core),
    keep: values.keep !== undefined,
    perfMap: values['perf-map'],
    classes: values.classes ? values.classes.split(',').map((s) => s.trim()) : null,
    nodeArgs: values['node-args'].split(/\s+/).filter(Boolean),
  };
  const targets: Target[] = [];
  if (!values['no-floor']) targets.push({ name: 'floor', kind: 'floor', dir: ROOT });
  if (!values['no-current']) targets.push({ name: 'preconf-node', kind: 'node', dir: ROOT });
  for (const b of values.baseline.flatMap((x) => x.split(',')).filter(Boolean)) {
    const dir = resolveBaseline(b, log);
    targets.push({ name: `baseline (${checkout(dir).commit})`, kind: 'node', dir });
  }
  const outDir = values.keep ?? mkdtempSync(join(tmpdir(), 'instructions-'));
  mkdirSync(outDir, { recursive: true });
  const load0 = loadavg()[0]!;
  const results: TargetCount[] = [];
  for (const t of targets) results.push(await measureTarget(t, o, outDir));
  if (!o.keep && existsSync(outDir)) rmSync(outDir, { recursive: true, force: true });
  const header = `Instructions per request under callgrind (${o.requests} requests per class after ${o.warmup} warm-up, one connection, idle rate subtracted; load average ${load0.toFixed(2)} → ${loadavg()[0]!.toFixed(2)}, which does not change the counts). Node ${process.version}.\n\n`;
  process.stdout.write(header + renderCounts(results));
  if (values.out) writeFileSync(values.out, JSON.stringify({ date: new Date().toISOString(), options: o, targets: results }, null, 2));
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
