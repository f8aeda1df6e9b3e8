// One logger for every line. As JSON (the default off a terminal) each line is
// one parseable object: start-up configuration at info, each seal at debug with its
// figures, slow requests at warn with method, duration and size but never parameters, and
// lines from the Rust side (the store's, the pool journal's) with their fields. --log-format
// pretty prints the same events for a person.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { rpc } from '../helpers/node.js';
import { spawnNode, type NodeProcess } from '../helpers/process.js';
import { waitFor } from '../helpers/wait.js';

type Line = Record<string, unknown> & { level: string; msg: string; time: string };

const lines = (n: NodeProcess): Line[] =>
  n
    .output()
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Line);

describe('structured logs', () => {
  const datadir = mkdtempSync(join(tmpdir(), 'preconf-logs-'));
  let node: NodeProcess | undefined;
  afterAll(async () => {
    await node?.kill('SIGKILL');
    rmSync(datadir, { recursive: true, force: true });
  });

  it('writes one JSON object per line: start-up, seals at debug, slow requests, Rust-side events', async () => {
    node = await spawnNode(['--datadir', datadir, '--log-level', 'debug', '--log-slow-ms', '0', '--block-time-ms', '100', '--preconf-interval-ms', '50']);
    const url = node.url;
    await waitFor(() => lines(node!).some((l) => l.msg === 'sealed'), 10_000, 'a seal line');
    const secret = '0x00000000000000000000000000000000000000000000000000000000c0ffee00';
    await rpc(url, 'eth_getStorageAt', ['0x0000000000000000000000000000000000000001', secret, 'latest']);
    await rpc(url, 'eth_getBlockByNumber', ['latest', true]);
    await waitFor(() => lines(node!).some((l) => l.msg === 'slow request' && l.method === 'eth_getStorageAt'), 5_000, 'a slow-request line');

    const all = lines(node); // every line parses as JSON
    for (const l of all) {
      expect(['debug', 'info', 'warn', 'error']).toContain(l.level);
      expect(typeof l.msg).toBe('string');
      expect(Number.isNaN(Date.parse(l.time))).toBe(false);
    }
    const start = all.find((l) => l.chainId === 31337);
    expect(start?.level).toBe('info');
    expect(start?.store).toBe(datadir);
    const seal = all.find((l) => l.msg === 'sealed')!;
    expect(seal).toMatchObject({ level: 'debug', component: 'builder' });
    for (const field of ['number', 'transactions', 'gasUsed', 'sealMs', 'lastCommitMs']) expect(typeof seal[field], field).toBe('number');
    const slow = all.find((l) => l.msg === 'slow request' && l.method === 'eth_getStorageAt')!;
    expect(slow).toMatchObject({ level: 'warn', component: 'rpc' });
    expect(typeof slow.durationMs).toBe('number');
    expect(typeof slow.responseBytes).toBe('number');
    expect(JSON.stringify(all)).not.toContain('c0ffee'); // never parameters

    // A line from Rust, with fields: the store checked after kill -9.
    await node.kill('SIGKILL');
    node = await spawnNode(['--datadir', datadir]);
    const store = await waitFor(() => lines(node!).find((l) => l.component === 'store'), 5_000, 'the store line');
    expect(store.level).toBe('warn');
    expect(store.msg).toContain('not closed cleanly');
    // Debug lines are off at the default level.
    expect(lines(node).some((l) => l.level === 'debug')).toBe(false);
    await node.kill('SIGTERM');

    node = await spawnNode(['--datadir', datadir, '--log-format', 'pretty']);
    const text = node.output();
    expect(text).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}Chain id 31337/m);
    expect(text.trimStart().startsWith('{')).toBe(false);
  }, 60_000);
});
