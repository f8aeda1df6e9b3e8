// Runs the Rust tests for the host triple explicitly: @napi-rs/cli builds the addon with
// `--target <host>`, so testing with the same flag reuses its compiled dependencies
// instead of building everything a second time (minutes on a cold CI machine).

import { execFileSync, spawnSync } from 'node:child_process';

const host = /host: (\S+)/.exec(execFileSync('rustc', ['-vV'], { encoding: 'utf8' }))?.[1];
if (!host) {
  console.error('cannot read the host triple from `rustc -vV`');
  process.exit(1);
}
const r = spawnSync('cargo', ['test', '--release', '--workspace', '--target', host, ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(r.status ?? 1);
