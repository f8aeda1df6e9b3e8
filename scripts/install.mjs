// npm install hook: use a prebuilt addon when one fits this machine, otherwise build it
// from the Rust sources (needs cargo). Kept dependency-free: it runs before anything else.
// When neither works it prints one message naming the supported platforms (platforms.mjs).

import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { addonFile, currentPlatform, noAddonMessage, platformPackage } from './platforms.mjs';
import { loadUws, noUwsMessage } from './uws-builds.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const triple = currentPlatform();
const local = join(root, 'native', addonFile(triple));

function loads(path) {
  try {
    require(path);
    return true;
  } catch {
    return false;
  }
}

function prebuilt() {
  if (existsSync(local) && loads(local)) return local;
  try {
    const pkg = require.resolve(platformPackage(triple));
    if (loads(pkg)) return pkg;
  } catch {
    // no platform package installed
  }
  return null;
}

function run(cmd, args) {
  console.log(`preconf-node: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  return r.status === 0;
}

// The server needs a uWebSockets.js build for this Node.js line and libc: without one nothing
// else here would help, so say so first, in one line.
const uws = loadUws();
if (uws.uws === null) {
  console.error(`preconf-node: ${noUwsMessage(uws.tried)}`);
  process.exit(1);
}

// Development checkouts also fetch nats-server for the replication tests. Not fatal here:
// vitest's global setup tries again and fails loudly if it still cannot get one.
const ensureNats = join(root, 'scripts', 'ensure-nats.mjs');
if (existsSync(ensureNats)) {
  try {
    const { ensureNatsServer } = await import(pathToFileURL(ensureNats).href);
    console.log(`preconf-node: nats-server for tests: ${await ensureNatsServer()}`);
  } catch (e) {
    console.warn(`preconf-node: warning: ${e.message}`);
  }
}

if (process.env.PRECONF_NODE_FORCE_BUILD !== '1') {
  const found = prebuilt();
  if (found) {
    console.log(`preconf-node: using prebuilt addon ${found}`);
    process.exit(0);
  }
}

// Nothing prebuilt fits: building needs the Rust sources (a checkout) and cargo.
const cargo = spawnSync('cargo', ['--version'], { stdio: 'ignore' });
if (!existsSync(join(root, 'crates', 'napi', 'Cargo.toml')) || cargo.error || cargo.status !== 0) {
  console.error(`preconf-node: ${noAddonMessage(triple)}`);
  process.exit(1);
}

const napiCli = join(root, 'node_modules', '.bin', 'napi');
let ok = false;
if (existsSync(napiCli)) {
  ok = run(napiCli, [
    'build',
    '--platform',
    '--release',
    '--manifest-path',
    'crates/napi/Cargo.toml',
    '--output-dir',
    'native',
    '--no-js',
    '--no-const-enum',
    '--dts',
    'native.d.ts',
  ]);
} else {
  // Installed without dev dependencies: build with cargo directly.
  ok = run('cargo', ['build', '--release', '-p', 'preconf-napi']);
  if (ok) {
    mkdirSync(join(root, 'native'), { recursive: true });
    copyFileSync(join(root, 'target', 'release', 'libpreconf_napi.so'), local);
  }
}
if (!ok || !loads(local)) {
  console.error('preconf-node: building the native addon failed (is Rust installed? https://rustup.rs)');
  process.exit(1);
}
console.log(`preconf-node: built ${local}`);
