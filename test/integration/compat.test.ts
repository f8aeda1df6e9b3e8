// `npm run compat` end to end: the real runner imports the kit's chain with `preconf-node
// import`, serves it with `--no-build --profile geth`, replays the 177 fixtures, and must reach
// the floor in test/compat/floor.json. A second run on the same datadir reuses the import.
// Needs the built command (dist/, as `npm install` leaves it) and the rpc-compat kit
// (test/fixtures/rpc-compat, or $RPC_COMPAT_DIR).

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadExceptions, loadFloor, MAX_EXCEPTIONS } from '../compat/config.js';
import { kitDir, loadFixtures } from '../compat/fixtures.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

interface Run {
  code: number | string;
  output: string;
}

function runCompat(args: string[]): Promise<Run> {
  return new Promise((ok) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(repo, 'scripts', 'compat.ts'), ...args], { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('exit', (code, signal) => ok({ code: code ?? signal ?? -1, output }));
  });
}

interface Report {
  passed: number;
  failed: number;
  excepted: number;
  files: number;
  floor: number;
  subset: boolean;
  exceptions: { file: string; reason: string }[];
}

describe('rpc-compat suite (npm run compat)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'compat-it-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('imports the chain, replays every fixture and reaches the floor; a second run reuses the datadir', async () => {
    const total = loadFixtures(kitDir()).length;
    const floor = loadFloor();
    const datadir = join(dir, 'chain');
    const first = await runCompat(['--datadir', datadir, '--report', join(dir, 'first.json')]);
    expect(first.output).toContain(`importing 54 blocks into ${datadir}`);
    expect(first.code, first.output).toBe(0);
    const report = JSON.parse(readFileSync(join(dir, 'first.json'), 'utf8')) as Report;
    expect(report).toMatchObject({ files: total, floor, subset: false });
    expect(report.passed).toBeGreaterThanOrEqual(floor);
    expect(report.passed + report.failed + report.excepted).toBe(total);
    expect(report.exceptions.length).toBeLessThanOrEqual(MAX_EXCEPTIONS);
    // Every documented exception is one that fails (and is reported as such), and nothing
    // else is excepted: an entry that passes now must go from exceptions.json.
    expect(report.exceptions.map((e) => e.file).sort()).toEqual([...loadExceptions(loadFixtures(kitDir()).map((f) => f.name)).keys()].sort());

    // The datadir now holds the chain: no second import, and the same results, since each run
    // serves a fresh copy (the transactions sent by the first run are not in the second's pool).
    const second = await runCompat(['--datadir', datadir, '--report', join(dir, 'second.json')]);
    expect(second.code, second.output).toBe(0);
    expect(second.output).toContain(`chain already imported in ${datadir} (head 54,`);
    expect(second.output).not.toContain('importing');
    const again = JSON.parse(readFileSync(join(dir, 'second.json'), 'utf8')) as Report;
    expect(again.passed).toBe(report.passed);
  }, 600_000);
});
