// The uWebSockets.js build the node picks on this Node.js line and libc, and the one-line
// refusal where none fits, checked for real: a Node.js line with no build on this machine
// (24 on glibc < 2.38, 26 where the glibc is newer) is fetched and run (docs/runtime.md).

import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureNode } from '../../scripts/ensure-node.mjs';
import { runtime } from '../../scripts/uws-builds.mjs';
import { spawnNode, type NodeProcess } from '../helpers/process.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const NEW = { name: '@btc-vision/uwebsockets.js', version: '20.57.0' };
const OLD = { name: '@trufflesuite/uws-js-unofficial', version: '20.30.0-unofficial.0' };

const glibc = /^glibc (\d+)\.(\d+)/.exec(runtime().libc);
const glibcAtLeast238 = glibc !== null && (Number(glibc[1]) > 2 || Number(glibc[2]) >= 38);
const nodeLine = Number(process.versions.node.split('.')[0]);
/** What the docs' matrix says serves here. */
const expected = glibcAtLeast238 ? NEW : OLD;

describe('the uWebSockets.js build', () => {
  let node: NodeProcess;
  beforeAll(async () => {
    node = await spawnNode(['--ephemeral']);
  });
  afterAll(async () => {
    await node?.kill();
  });

  it(`serves with the build the matrix names for Node.js ${nodeLine} on ${runtime().libc}, and says which`, async () => {
    expect(nodeLine === 20 || glibcAtLeast238, 'this machine runs a combination with no build').toBe(true);
    const health = (await (await fetch(`${node.url}/health`)).json()) as { runtime: { node: string; uws: string } };
    expect(health.runtime).toEqual({ node: process.version, uws: `${expected.name}@${expected.version}` });
    expect(node.output()).toContain(`Node.js ${process.version}, uWebSockets.js ${expected.version} from ${expected.name}`);
  });
});

describe('a Node.js line no build fits', () => {
  // On an older glibc Node.js 24 has no build (20.57 needs 2.38, 20.30 stops at Node.js 20);
  // on a newer one Node.js 26 has none (no npm build carries its ABI yet).
  const line = glibcAtLeast238 ? 26 : 24;
  let other: string;
  beforeAll(() => {
    other = ensureNode(line);
  }, 300_000);

  const refusal = new RegExp(
    `^preconf-node: no uWebSockets\\.js build loads on Node\\.js v${line}\\.\\d+\\.\\d+ \\(linux-x64, ${runtime().libc.replace(/\./g, '\\.')}\\): ` +
      `${NEW.name} ${NEW.version.replace(/\./g, '\\.')}: (needs glibc 2\\.38 or newer|no binary for Node\\.js v${line} \\(ABI \\d+\\)); ` +
      `${OLD.name} ${OLD.version.replace(/\./g, '\\.')}: no binary for Node\\.js v${line} \\(ABI \\d+\\)\\. .*docs/runtime\\.md\\)\\.$`,
  );

  it(`the node stops with one line on Node.js ${line}, naming the runtime, the builds tried and what to do`, () => {
    const run = spawnSync(other, [join(root, 'bin', 'preconf-node.cjs'), '--ephemeral', '--port', '0', '--quiet'], { encoding: 'utf8', timeout: 30_000 });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim()).toMatch(refusal);
  });

  it(`npm install's script stops with the same line on Node.js ${line}`, () => {
    const run = spawnSync(other, [join(root, 'scripts', 'install.mjs')], {
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, PRECONF_NODE_FORCE_BUILD: '' },
    });
    expect(run.status).toBe(1);
    expect(run.stderr.trim()).toMatch(refusal);
  });

  it('the subcommands that need no server still run there', () => {
    const run = spawnSync(other, [join(root, 'bin', 'preconf-node.cjs'), '--help'], { encoding: 'utf8', timeout: 30_000 });
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('--port');
  });
});
