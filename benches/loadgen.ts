// Runs the Rust load generator (crates/loadgen) and parses its JSON report.

import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pinnedCommand } from './pinning.js';
import { ROOT } from './util.js';

// cargo puts the binary under CARGO_TARGET_DIR when it is set (e.g. a shared target dir).
export const LOADGEN = join(resolve(ROOT, process.env.CARGO_TARGET_DIR ?? 'target'), 'release', 'loadgen');

/** The cores every load generator run is pinned to (null: wherever the driver runs). */
let cores: number[] | null = null;
export function pinLoadgen(to: number[] | null): void {
  cores = to;
}

export function buildLoadgen(): void {
  execFileSync('cargo', ['build', '--release', '-p', 'loadgen'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
}

export class LoadgenError extends Error {
  override name = 'LoadgenError';
}

/** Fails before any server starts when the binary is not where this run looks for it. */
export function checkLoadgen(): void {
  if (!existsSync(LOADGEN)) {
    throw new LoadgenError(`no load generator at ${LOADGEN}: run without --no-build, or set CARGO_TARGET_DIR to where it was built`);
  }
}

export interface Latency {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
}

export interface RunReport {
  mode: 'run';
  connections: number;
  pipeline: number;
  window_s: number;
  requests: number;
  ok: number;
  errors: number;
  rps: number;
  latency_us: Latency;
  bytes_in: number;
  cpu_s: number;
  wall_s: number;
  error_sample: string | null;
  /** With --timestamps: [body index, sent, done (unix µs), ok 0/1]. */
  timestamps?: [number, number, number, number][];
}

export interface WatchEvent {
  prev_send_us: number;
  send_us: number;
  recv_us: number;
  values: Record<string, string>;
}

export interface WatchReport {
  mode: 'watch';
  polls: number;
  errors: number;
  rtt_us: Latency;
  error_sample: string | null;
  events: WatchEvent[];
}

export interface LoadSpec {
  url: string;
  bodies: string[]; // one JSON-RPC body per entry, cycled over the connections
  connections: number;
  duration: number;
  warmup?: number;
  pipeline?: number;
  rate?: number;
  once?: boolean;
  timestamps?: boolean;
}

async function exec(args: string[], bodies: string[]): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'loadgen-'));
  try {
    const file = join(dir, 'bodies.jsonl');
    writeFileSync(file, bodies.join('\n') + '\n');
    const all = [...args, '--bodies', file];
    const [cmd, argv] = cores ? pinnedCommand(cores, LOADGEN, all) : [LOADGEN, all];
    const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    // 'close', not 'exit': the exit can come before the last of a long report is read.
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    if (code !== 0) throw new Error(`loadgen exited with ${code}: ${err}`);
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runLoad(spec: LoadSpec): Promise<RunReport> {
  for (const b of spec.bodies) if (b.includes('\n')) throw new Error('a request body must be one line');
  const args = ['run', '--url', spec.url, '--connections', String(spec.connections), '--duration', String(spec.duration)];
  args.push('--warmup', String(spec.warmup ?? 0), '--pipeline', String(spec.pipeline ?? 1));
  if (spec.rate) args.push('--rate', String(spec.rate));
  if (spec.once) args.push('--once');
  if (spec.timestamps) args.push('--timestamps');
  return JSON.parse(await exec(args, spec.bodies)) as RunReport;
}

export async function runWatch(url: string, body: string, duration: number, intervalMs: number): Promise<WatchReport> {
  const args = ['watch', '--url', url, '--duration', String(duration), '--interval-ms', String(intervalMs)];
  return JSON.parse(await exec(args, [body])) as WatchReport;
}
