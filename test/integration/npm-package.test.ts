// The published shape, installed as a user without Rust would: `npm pack` of the main
// package and of the platform package (holding the addon built from this tree), installed
// into an empty directory with npm --offline on a PATH without cargo, then `npx
// preconf-node` answers eth_chainId. On a platform nothing is published for, the command
// and the install script both say which platforms are supported.

import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '../helpers/anvil.js';
import { rpc } from '../helpers/node.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const PLATFORM = 'linux-x64-gnu';
const ADDON = join(root, 'native', `preconf-node.${PLATFORM}.node`);

/** This PATH without any directory that holds cargo or rustc. */
const pathWithoutRust = (): string =>
  (process.env.PATH ?? '')
    .split(delimiter)
    .filter((dir) => dir !== '' && !existsSync(join(dir, 'cargo')) && !existsSync(join(dir, 'rustc')))
    .join(delimiter);

function npm(args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): SpawnSyncReturns<string> {
  return spawnSync('npm', [...args, '--no-audit', '--no-fund'], { cwd, env, encoding: 'utf8', timeout: 120_000 });
}

function ok(r: SpawnSyncReturns<string>, what: string): string {
  if (r.status !== 0) throw new Error(`${what} exited ${r.status ?? r.signal}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

describe('the npm packages, installed without Rust', () => {
  let work: string;
  let app: string;
  let tarballs: string[];
  let env: NodeJS.ProcessEnv;

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'preconf-npm-'));
    // The main package and the platform package with the addon of this tree, packed from a
    // temporary copy of npm/<platform>. The main package's dist/ is the one `npm install`
    // compiled (its `prepare`): packed without running `prepare` again, which would rewrite
    // dist/ in place while other test files' nodes are loading it (a node once failed to
    // import a module caught half-written).
    ok(npm(['pack', '--ignore-scripts', '--pack-destination', work], root), 'npm pack (main)');
    const platform = join(work, PLATFORM);
    mkdirSync(platform);
    copyFileSync(join(root, 'npm', PLATFORM, 'package.json'), join(platform, 'package.json'));
    copyFileSync(ADDON, join(platform, `preconf-node.${PLATFORM}.node`));
    ok(npm(['pack', '--pack-destination', work], platform), 'npm pack (platform)');
    tarballs = readdirSync(work)
      .filter((f) => f.endsWith('.tgz'))
      .map((f) => join(work, f));
    expect(tarballs.map((t) => t.slice(work.length + 1)).sort()).toEqual([`preconf-node-0.1.0.tgz`, `preconf-node-${PLATFORM}-0.1.0.tgz`]);
    // The registry's metadata of the runtime dependencies (uWebSockets.js, prom-client, ...)
    // into npm's cache, as any earlier install would have put it there; the real install
    // below is --offline, so it can fetch nothing else.
    const prime = join(work, 'prime');
    mkdirSync(prime);
    // Each folder is a project of its own: npm would otherwise install into the nearest
    // parent with a node_modules or package.json (a stray /tmp/node_modules did that once).
    writeFileSync(join(prime, 'package.json'), '{"private":true}');
    ok(npm(['install', '--prefer-offline', '--ignore-scripts', ...tarballs], prime), 'priming the npm cache');
    app = join(work, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), '{"private":true}');
    env = { ...process.env, PATH: pathWithoutRust() };
  }, 180_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('installs offline on a PATH without cargo, using the platform package', () => {
    expect(spawnSync('cargo', ['--version'], { env }).error).toBeDefined(); // really no cargo
    const out = ok(npm(['install', '--offline', '--foreground-scripts', ...tarballs], app, env), 'npm install --offline');
    expect(out).toContain(`preconf-node: using prebuilt addon ${join(app, 'node_modules', `preconf-node-${PLATFORM}`)}`);
    // The runtime dependency came from the cache, and no addon was built into the package.
    // Both uWebSockets.js builds (docs/runtime.md): the current one and, optional, 20.30.
    const uws = (alias: string): string => (JSON.parse(readFileSync(join(app, 'node_modules', alias, 'package.json'), 'utf8')) as { name: string }).name;
    expect(uws('uWebSockets.js')).toBe('@btc-vision/uwebsockets.js');
    expect(uws('uWebSockets.js-20.30')).toBe('@trufflesuite/uws-js-unofficial');
    expect(existsSync(join(app, 'node_modules', 'preconf-node', 'native', `preconf-node.${PLATFORM}.node`))).toBe(false);
  }, 120_000);

  it('npx preconf-node starts and answers eth_chainId', async () => {
    const port = await freePort();
    // Its own process group, so the whole npx tree is stopped together.
    const child = spawn('npx', ['preconf-node', '--port', String(port), '--ephemeral', '--quiet'], {
      cwd: app,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      await vi.waitFor(
        () => {
          if (child.exitCode !== null) throw new Error(`npx preconf-node exited:\n${output}`);
          if (!output.includes('Listening on')) throw new Error(`npx preconf-node did not start:\n${output}`);
        },
        { timeout: 30_000, interval: 50 },
      );
      expect((await rpc(`http://127.0.0.1:${port}`, 'eth_chainId')).result).toBe('0x7a69');
    } finally {
      process.kill(-child.pid!, 'SIGTERM');
    }
    await exited;
    // The node itself shut down cleanly (npx reports the signal it was sent).
    expect(output).toContain('SIGTERM: shutting down');
  }, 60_000);

  it('on a platform nothing is published for, the command and the install script name the supported platforms', () => {
    const unsupported = { ...env, PRECONF_NODE_PLATFORM: 'freebsd-x64-gnu' };
    const message = /no prebuilt addon for freebsd-x64-gnu: prebuilt addons exist for linux-x64-gnu\. .*rustup/;
    const run = spawnSync('npx', ['preconf-node', '--port', '0', '--ephemeral'], { cwd: app, env: unsupported, encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`^preconf-node: ${message.source}`, 'm'));
    const install = spawnSync(process.execPath, [join(app, 'node_modules', 'preconf-node', 'scripts', 'install.mjs')], { env: unsupported, encoding: 'utf8' });
    expect(install.status).toBe(1);
    // One line, nothing else.
    expect(install.stderr.trim()).toMatch(new RegExp(`^preconf-node: ${message.source}[^\\n]*$`));
  });
});
