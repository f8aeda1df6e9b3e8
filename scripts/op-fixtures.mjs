// `npm run op-fixtures -- [DIR]`: executes every witness fixture (block-*.json, gzipped or
// not) of DIR — by default the repository's OP Sepolia Holocene blocks — with crates/op's
// `op-fixtures` binary, one line per block and `N passed, M failed` last; exits nonzero on a
// failure.
//
// The binary is built the way `npm run test:rust` builds the workspace (release, host
// triple, every workspace member selected): cargo builds a package's binaries for its
// integration tests, so after the Rust tests this is a no-op build and a small link at
// most, and the dependencies are never compiled a second time with other features.

import { execFileSync, spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dir = resolve(process.argv[2] ?? join(root, 'test/fixtures/op/op-sepolia-holocene'));
const host = /host: (\S+)/.exec(execFileSync('rustc', ['-vV'], { encoding: 'utf8' }))?.[1];
if (!host) {
  console.error('cannot read the host triple from `rustc -vV`');
  process.exit(1);
}

const build = spawnSync('cargo', ['test', '--release', '--workspace', '--target', host, '--no-run', '--message-format=json-render-diagnostics'], {
  cwd: root,
  encoding: 'utf8',
  stdio: ['ignore', 'pipe', 'inherit'],
  maxBuffer: 1 << 28,
});
if (build.status !== 0) process.exit(build.status ?? 1);
const exe = build.stdout
  .split('\n')
  .filter((line) => line.startsWith('{'))
  .map((line) => JSON.parse(line))
  .find((m) => m.reason === 'compiler-artifact' && m.target?.kind?.includes('bin') && m.target.name === 'op-fixtures' && !m.profile?.test)?.executable;
if (!exe) {
  console.error('cargo built no op-fixtures binary');
  process.exit(1);
}
const run = spawnSync(exe, [dir], { stdio: 'inherit' });
process.exit(run.status ?? 1);
