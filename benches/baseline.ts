// A baseline named by a git ref (`--baseline 86ee648`): the commit checked out in a worktree
// and built there (dist/ and the addon), so that `npm run bench` and `bench:instructions`
// compare it with this checkout in one run. A directory holding a built checkout is used as
// it is. The worktree is kept (BENCH_WORKTREES, default /tmp/preconf-baselines/<commit>) and
// reused while its build is newer than its sources.

import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ROOT } from './util.js';

export class BaselineBuildError extends Error {
  override name = 'BaselineError';
}

function git(args: string[], cwd = ROOT): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, log: (m: string) => void): void {
  log(`${cwd}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd, env, stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new BaselineBuildError(`${cmd} ${args.join(' ')} failed in ${cwd} (exit ${r.status})`);
}

/** Whether `commit` has the Rust sources of this checkout's work tree. */
function sameRust(commit: string): boolean {
  return spawnSync('git', ['diff', '--quiet', commit, '--', 'crates', 'Cargo.toml', 'Cargo.lock'], { cwd: ROOT }).status === 0;
}

const built = (dir: string) =>
  existsSync(join(dir, 'dist', 'main.js')) && existsSync(join(dir, 'native')) && readdirSync(join(dir, 'native')).some((f) => f.endsWith('.node'));

/** The same runtime dependencies at the same versions: this checkout's node_modules serves both. */
function sameDependencies(dir: string): boolean {
  const deps = (d: string) => (JSON.parse(readFileSync(join(d, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> }).dependencies ?? {};
  const ours = deps(ROOT);
  return Object.entries(deps(dir)).every(([name, v]) => ours[name] === v);
}

/**
 * The directory of a built baseline: `arg` itself when it is a checkout, otherwise the commit
 * `arg` names, checked out and built in a worktree (cargo reuses CARGO_TARGET_DIR when set,
 * else the worktree's own target/, which a first build fills).
 */
export function resolveBaseline(arg: string, log: (m: string) => void): string {
  if (existsSync(join(arg, 'bin', 'preconf-node.cjs'))) return resolve(arg);
  let commit: string;
  try {
    commit = git(['rev-parse', '--verify', `${arg}^{commit}`]);
  } catch {
    throw new BaselineBuildError(`--baseline ${arg}: neither a checkout of the node nor a commit of ${ROOT}`);
  }
  const dir = join(process.env.BENCH_WORKTREES ?? '/tmp/preconf-baselines', commit.slice(0, 12));
  if (!existsSync(dir)) {
    mkdirSync(join(dir, '..'), { recursive: true });
    run('git', ['worktree', 'add', '--detach', dir, commit], ROOT, process.env, log);
  }
  if (built(dir)) {
    log(`baseline ${arg}: ${dir} already built`);
    return dir;
  }
  if (!existsSync(join(dir, 'node_modules'))) {
    if (sameDependencies(dir)) symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    else run('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund'], dir, process.env, log);
  }
  run('npx', ['tsc', '-p', 'tsconfig.build.json'], dir, process.env, log);
  const ours = existsSync(join(ROOT, 'native')) ? readdirSync(join(ROOT, 'native')).filter((f) => f.endsWith('.node')) : [];
  if (ours.length > 0 && sameRust(commit)) {
    // The same Rust sources as this checkout (and this checkout's addon built from them):
    // its addon serves both, and a TypeScript-only step costs no cargo build.
    mkdirSync(join(dir, 'native'), { recursive: true });
    for (const f of ours) copyFileSync(join(ROOT, 'native', f), join(dir, 'native', f));
    log(`baseline ${arg}: crates/ as in this checkout, its addon copied`);
  } else {
    run('npm', ['run', 'build:native'], dir, process.env, log);
  }
  if (!built(dir)) throw new BaselineBuildError(`${dir}: the build left no dist/main.js or native/*.node`);
  return dir;
}
