// A disk that fills up. On a small tmpfs (mounted here; CI runs as root) the node
// stops sealing once the datadir has less than --min-free-disk-mb free, keeps answering
// reads, refuses transactions with a clear error, answers /health 503 with the reason, and
// logs it; once space is freed it goes on by itself: the transaction accepted before the
// fault is sealed, nothing is lost, and the store verifies.

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseGwei, type Hex } from 'viem';
import { afterAll, describe, expect, it } from 'vitest';
import { devAccount, rpc } from '../helpers/node.js';
import { spawnNode, type NodeProcess } from '../helpers/process.js';
import { waitFor } from '../helpers/wait.js';
import { signTransfer } from '../helpers/transfer.js';

const bin = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'preconf-node.cjs');
const isRoot = process.getuid?.() === 0;
const MIN_FREE_MB = 16;

describe.skipIf(!isRoot)('a full disk (tmpfs, as root)', () => {
  const mnt = mkdtempSync(join(tmpdir(), 'preconf-diskfull-'));
  let mounted = false;
  let node: NodeProcess | undefined;
  afterAll(async () => {
    await node?.kill('SIGKILL');
    if (mounted) execFileSync('umount', [mnt]);
    rmSync(mnt, { recursive: true, force: true });
  });

  it('stops sealing, serves reads, refuses transactions, reports 503; resumes by itself once space is freed', async () => {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64m', 'tmpfs', mnt]);
    mounted = true;
    const datadir = join(mnt, 'data');
    mkdirSync(datadir);
    node = await spawnNode(['--datadir', datadir, '--min-free-disk-mb', String(MIN_FREE_MB), '--block-time-ms', '200', '--preconf-interval-ms', '50']);
    const url = node.url;
    const sender = devAccount(0);
    const sign = (nonce: number) => signTransfer(sender, { to: devAccount(1).address, nonce, maxFeePerGas: parseGwei('20') });
    const receipt = async (h: Hex) => (await rpc(url, 'eth_getTransactionReceipt', [h])).result;
    const head = async () => Number(BigInt((await rpc(url, 'eth_blockNumber')).result));
    const health = async () => {
      const r = await fetch(`${url}/health`);
      return { status: r.status, body: (await r.json()) as { status: string; reason?: string } };
    };
    const first = (await rpc(url, 'eth_sendRawTransaction', [await sign(0)])).result as Hex;
    await waitFor(() => receipt(first), 10_000, 'the first transaction sealed');
    expect((await health()).status).toBe(200);

    // Accepted just before the disk fills: it must be sealed once the node can write again.
    const before = (await rpc(url, 'eth_sendRawTransaction', [await sign(1)])).result as Hex;
    expect(before).toMatch(/^0x[0-9a-f]{64}$/);
    const filler = join(mnt, 'filler');
    const free = (): number => {
      const s = statfsSync(mnt);
      return s.bavail * s.bsize;
    };
    writeFileSync(filler, Buffer.alloc(Math.max(0, free() - 4 * 1024 * 1024)));
    expect(free()).toBeLessThan(MIN_FREE_MB * 1024 * 1024);

    const degraded = await waitFor(
      async () => {
        const h = await health();
        return h.status === 503 ? h : null;
      },
      10_000,
      '/health 503',
    );
    expect(degraded.body.reason).toContain('disk full');
    expect(degraded.body.reason).toContain('--min-free-disk-mb');
    // No sealing while the store cannot write (let a few block times pass: nothing may happen).
    const stuck = await head();
    await new Promise((r) => setTimeout(r, 1000));
    expect(await head()).toBe(stuck);
    // Reads answer from what the node holds.
    expect((await rpc(url, 'eth_getBalance', [sender.address, 'latest'])).result).toMatch(/^0x/);
    expect((await rpc(url, 'eth_getBlockByNumber', ['latest', false])).result.number).toBe(`0x${stuck.toString(16)}`);
    // New transactions are refused, saying why.
    const refused = await rpc(url, 'eth_sendRawTransaction', [await sign(2)]);
    expect(refused.error.code).toBe(-32000);
    expect(refused.error.message).toContain('transaction refused: the node cannot write');
    expect(refused.error.message).toContain('disk full');
    // And it says so in its log, as a JSON line with the reason.
    const logged = node
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logged.some((l) => l.level === 'error' && l.component === 'store' && String(l.reason).includes('disk full'))).toBe(true);

    rmSync(filler);
    await waitFor(async () => (await health()).status === 200, 10_000, '/health 200 once space is freed');
    await waitFor(() => receipt(before), 10_000, 'the transaction accepted before the fault sealed');
    await waitFor(async () => (await head()) > stuck, 10_000, 'sealing to resume');
    const after = (await rpc(url, 'eth_sendRawTransaction', [await sign(2)])).result as Hex;
    await waitFor(() => receipt(after), 10_000, 'a new transaction sealed');

    // The store is intact.
    expect(await node.kill('SIGTERM')).toBe(0);
    node = undefined;
    const verify = spawnSync(process.execPath, [bin, 'verify', '--datadir', datadir], { encoding: 'utf8' });
    expect(verify.stdout + verify.stderr).toContain('state root matches');
  }, 60_000);
});
