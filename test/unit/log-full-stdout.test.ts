// The logger on a non-blocking stdout that its reader stops draining (a log shipper that
// stalls, a terminal paused): lines may be dropped, but the process must not throw EAGAIN
// into the code that logged, and logging must resume once the reader drains again.

import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const LOGGER = resolve(import.meta.dirname, '../../dist/log/index.js');

// The child makes its stdout non-blocking, writes far more than a pipe holds while nobody
// reads, says `burst` on stderr, then waits for a byte on stdin (the reader draining again)
// and, past the drop window, logs one more line.
const CHILD = `
process.stdout._handle.setBlocking(false);
const m = await import(${JSON.stringify(LOGGER)});
const log = m.createLogger({ format: 'json', level: 'info', slowMs: 1 });
for (let i = 0; i < 20000; i++) log.warn({ i }, 'a slow request line');
process.stderr.write('burst\\n');
process.stdin.once('data', () => setTimeout(() => { log.warn('after the stall'); process.exit(0); }, 300));
`;

describe('logger on a full non-blocking stdout', () => {
  it('drops lines instead of throwing, and logs again once drained', async () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    let stdout = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => (stdout += d));
    child.stdout.pause();
    const exited = new Promise<number | null>((done) => child.on('close', done));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (stderr.includes('burst')) {
        child.stdout.resume();
        child.stdin.write('x');
      }
    });
    child.on('exit', () => child.stdout.resume());

    const code = await exited;
    expect(stderr).not.toContain('EAGAIN');
    expect(code).toBe(0);
    const lines = stdout.split('\n').filter((l) => l !== '');
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.length).toBeLessThan(20001);
    for (const line of lines) expect(() => JSON.parse(line) as unknown).not.toThrow();
    expect(JSON.parse(lines.at(-1) ?? '{}')).toMatchObject({ msg: 'after the stall' });
  });
});
