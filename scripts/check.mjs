// The checks a reviewer would make, as CI runs them: TypeScript typecheck, no test or script
// reading data from outside the repository, no cycle between sibling modules of any crate or
// of src/, clippy with warnings as errors, rustfmt, and that native/native.d.ts (the generated
// contract between the addon and TypeScript) matches the Rust source it is generated from.

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const host = /host: (\S+)/.exec(execFileSync('rustc', ['-vV'], { encoding: 'utf8' }))?.[1];

function step(name, cmd, args, env = {}) {
  console.log(`== ${name}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  if (r.status !== 0) {
    console.error(`check failed: ${name}`);
    process.exit(r.status ?? 1);
  }
}

step('typecheck', 'npx', ['tsc', '-p', 'tsconfig.json', '--noEmit']);
step('biome (format and lint of src, test, benches, scripts)', 'npx', ['biome', 'ci', '--colors=off']);
// The project skips library checks, under which a name native.d.ts does not declare (a
// stale `ts_type` in the Rust source) would quietly become `any`: check the file alone.
step('native.d.ts declares what it names', 'npx', ['tsc', '--noEmit', '--strict', '--types', 'node', 'native/native.d.ts']);
step('test data inside the repository', 'node', ['scripts/no-outside-data.mjs']);
step('module cycles', 'node', ['scripts/module-cycles.mjs']);
step('rustfmt', 'cargo', ['fmt', '--all', '--check']);
step('clippy', 'cargo', ['clippy', '--release', '--target', host, '--workspace', '--all-targets', '--', '-D', 'warnings']);

// Regenerate the declarations into a scratch directory and compare with the committed file.
const out = mkdtempSync(join(tmpdir(), 'preconf-dts-'));
try {
  step('native.d.ts', 'npx', [
    'napi',
    'build',
    '--platform',
    '--release',
    '--manifest-path',
    'crates/napi/Cargo.toml',
    '--output-dir',
    out,
    '--no-js',
    '--no-const-enum',
    '--dts',
    'native.d.ts',
  ]);
  const fresh = readFileSync(join(out, 'native.d.ts'), 'utf8');
  const committed = readFileSync('native/native.d.ts', 'utf8');
  if (fresh !== committed) {
    console.error('native/native.d.ts does not match the Rust source: run "npm run build:native" and commit it');
    process.exit(1);
  }
  console.log('native.d.ts matches the Rust source');
} finally {
  rmSync(out, { recursive: true, force: true });
}
