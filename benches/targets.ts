// The targets of a run: this checkout's node, other checkouts of it (--baseline, for
// before/after comparisons in one run), anvil, or only an external server (--url). Each
// started server is pinned to the server core; what was run is recorded for the report.

import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { anvilBinary } from '../test/helpers/anvil.js';
import type { Options } from './options.js';
import { describeAffinity } from './pinning.js';
import { startAnvil, startPreconfNode, type NodeTarget, type Server, type ServerKind } from './servers.js';
import { ROOT, rpc } from './util.js';
import { resolveBaseline } from './baseline.js';

export class BaselineError extends Error {
  override name = 'BaselineError';
}

/** A command's trimmed stdout, or '?' when it fails. */
export function sh(cwd: string, cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '?';
  }
}

/** When a checkout's built files were last written: a run uses dist/ and native/, not the sources. */
function builtAt(root: string, dir: string, suffix: string): string {
  try {
    const times = readdirSync(join(root, dir))
      .filter((f) => f.endsWith(suffix))
      .map((f) => statSync(join(root, dir, f)).mtimeMs);
    return times.length ? new Date(Math.max(...times)).toISOString() : '?';
  } catch {
    return '?';
  }
}

export interface Checkout {
  dir: string;
  commit: string;
  /** Node sources differ from the commit (the build may not be of `commit`). */
  dirty: boolean;
  addonBuilt: string;
  distBuilt: string;
}

export function checkout(dir: string): Checkout {
  return {
    dir,
    commit: sh(dir, 'git', ['rev-parse', '--short', 'HEAD']),
    dirty: sh(dir, 'git', ['status', '--porcelain', '--', 'src', 'crates/chain', 'crates/napi']) !== '',
    addonBuilt: builtAt(dir, 'native', '.node'),
    distBuilt: builtAt(dir, 'dist', '.js'),
  };
}

export interface Baseline extends NodeTarget {
  checkout: Checkout;
}

/** Checks that `dirs` hold built checkouts of the node and names them by commit. */
export function baselines(dirs: string[]): Baseline[] {
  const out: Baseline[] = [];
  for (const arg of dirs) {
    // A commit is checked out and built in a worktree first (baseline.ts).
    const d = existsSync(arg) ? arg : resolveBaseline(arg, (m) => process.stderr.write(`[bench] ${m}\n`));
    const root = resolve(d);
    const missing = ['bin/preconf-node.cjs', 'dist/main.js'].filter((f) => !existsSync(join(root, f)));
    const addon = existsSync(join(root, 'native')) && readdirSync(join(root, 'native')).some((f) => f.endsWith('.node'));
    if (!addon) missing.push('native/*.node');
    if (missing.length > 0) throw new BaselineError(`--baseline ${d}: missing ${missing.join(', ')} (build that checkout first)`);
    const co = checkout(root);
    const label = co.commit === '?' ? basename(root) : co.commit;
    const taken = out.some((b) => b.name === `baseline (${label})`);
    out.push({ name: taken ? `baseline (${label}, ${root})` : `baseline (${label})`, kind: 'baseline', root, checkout: co });
  }
  return out;
}

/** What the report says about one target. */
export interface TargetInfo {
  name: string;
  kind: ServerKind;
  url: string;
  pid: number | null;
  /** The CPUs its threads may run on, read from /proc after the start. */
  affinity: string | null;
  checkout: Checkout | null;
  version: string | null;
}

export function describe(s: Server, co: Checkout | null): TargetInfo {
  const version = s.kind === 'anvil' ? sh(ROOT, anvilBinary(), ['--version']).split('\n')[0]! : null;
  return { name: s.name, kind: s.kind, url: s.url, pid: s.pid, affinity: describeAffinity(s.pid), checkout: co, version };
}

/** This node, then the baselines, then anvil; stops those already started when one fails. */
export async function startTargets(o: Options, bases: Baseline[]): Promise<{ servers: Server[]; infos: TargetInfo[] }> {
  const cores = [o.serverCore];
  const servers: Server[] = [];
  const infos: TargetInfo[] = [];
  try {
    const current = await startPreconfNode([...o.nodeArgs, ...o.thisNodeArgs], undefined, cores);
    servers.push(current);
    infos.push(describe(current, checkout(ROOT)));
    for (const b of bases) {
      const s = await startPreconfNode(o.nodeArgs, b, cores);
      servers.push(s);
      infos.push(describe(s, b.checkout));
    }
    if (o.anvil) {
      const a = await startAnvil(cores);
      servers.push(a);
      infos.push(describe(a, null));
    }
  } catch (e) {
    await Promise.all(servers.map((s) => s.stop()));
    throw e;
  }
  return { servers, infos };
}

/** The server at --url, which this run neither starts nor pins. */
export async function externalTarget(url: string, pid: number | null): Promise<{ server: Server; info: TargetInfo }> {
  const pending = await rpc<Record<string, unknown> | null>(url, 'eth_getBlockByNumber', ['pending', false]).catch(() => null);
  const server: Server = { name: 'target', kind: 'external', url, pid, preconf: pending !== null && 'preconfIndex' in pending, stop: async () => {} };
  return { server, info: describe(server, null) };
}
