// `preconf-node import` as a user runs it, on the rpc-compat chain (test/fixtures/rpc-compat or
// $RPC_COMPAT_DIR): the whole chain, a tampered block that stops the import naming block and
// field, resuming after it, then serving the imported chain with --no-build (chain id from the
// genesis, the fork choice the import set, receipts of every era) in both profiles.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fromRlp, toRlp, type Hex } from 'viem';
import { afterAll, describe, expect, it } from 'vitest';
import { kitDir } from '../compat/fixtures.js';
import { runCommand as run, spawnNode } from '../helpers/process.js';

const kit = kitDir();
const genesis = join(kit, 'chain', 'genesis.json');
const chainFile = join(kit, 'chain', 'chain.rlp');
const HEAD = '0xd226371d0b1551adb03fb52b71f08e3e11247fe9b1af994768af8cdaa8e7dcd7';

/** The blocks of a concatenated RLP file, each as its own bytes. */
function splitBlocks(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length; ) {
    const prefix = bytes[at]!;
    if (prefix < 0xf8) throw new Error(`block at ${at} is not a long RLP list`);
    const lenOfLen = prefix - 0xf7;
    const len = bytes.subarray(at + 1, at + 1 + lenOfLen).reduce((n, b) => n * 256 + b, 0);
    out.push(bytes.subarray(at, at + 1 + lenOfLen + len));
    at += 1 + lenOfLen + len;
  }
  return out;
}

async function rpc(url: string, method: string, params: unknown[]): Promise<{ result?: any; error?: { code: number; message: string } }> {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await r.json()) as { result?: any; error?: { code: number; message: string } };
}

describe('preconf-node import', () => {
  const dir = mkdtempSync(join(tmpdir(), 'import-it-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('imports the chain, reports progress and the head, and a second run has nothing to do', async () => {
    const datadir = join(dir, 'whole');
    const first = await run(['import', '--genesis', genesis, '--datadir', datadir, chainFile]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toMatch(/import: block 54, 54 imported \(249 transactions\), [\d.]+ blocks\/s/);
    expect(first.stdout).toContain(`head 54 ${HEAD}, safe 54, finalized 54`);
    const again = await run(['import', '--genesis', genesis, '--datadir', datadir, chainFile]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('imported 0 blocks (0 transactions; 54 were already stored)');
  }, 120_000);

  it('stops at a tampered block naming block and field, and resumes after it with the good file', async () => {
    const blocks = splitBlocks(readFileSync(chainFile));
    const block = fromRlp(`0x${blocks[19]!.toString('hex')}` as Hex, 'hex') as Hex[][];
    const header = [...block[0]!];
    header[3] = `0x${'11'.repeat(32)}`; // stateRoot of block 20
    const tampered = Buffer.from(toRlp([header, ...block.slice(1)] as Hex[][], 'hex').slice(2), 'hex');
    const file = join(dir, 'tampered.rlp');
    writeFileSync(file, Buffer.concat([...blocks.slice(0, 19), tampered, ...blocks.slice(20)]));
    const datadir = join(dir, 'tampered');
    const failed = await run(['import', '--genesis', genesis, '--datadir', datadir, file]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/preconf-node import: block 20: invalid stateRoot: header has 0x(11){32}, execution gives 0x[0-9a-f]{64}/);
    const resumed = await run(['import', '--genesis', genesis, '--datadir', datadir, chainFile]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('imported 35 blocks');
    expect(resumed.stdout).toContain('19 were already stored');
    expect(resumed.stdout).toContain(`head 54 ${HEAD}`);
  }, 120_000);

  it('refuses bad arguments with status 2', async () => {
    const r = await run(['import', '--datadir', join(dir, 'none'), chainFile]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--genesis FILE is required');
    const bad = await run(['import', '--genesis', genesis, '--safe', 'x', chainFile]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--safe must be a block number');
  });

  it('serves the imported chain with --no-build: chain id, fork choice, receipts of each era, profiles', async () => {
    const datadir = join(dir, 'served');
    const imported = await run(['import', '--genesis', genesis, '--datadir', datadir, '--safe', '50', '--finalized', '40', chainFile]);
    expect(imported.code, imported.stderr).toBe(0);
    const node = await spawnNode(['--genesis', genesis, '--datadir', datadir, '--no-build']);
    try {
      expect((await rpc(node.url, 'eth_chainId', [])).result).toBe('0xc72dd9d5e883e');
      expect((await rpc(node.url, 'net_version', [])).result).toBe('3503995874084926');
      expect((await rpc(node.url, 'eth_blockNumber', [])).result).toBe('0x36');
      const tag = async (t: string): Promise<string> => (await rpc(node.url, 'eth_getBlockByNumber', [t, false])).result.number as string;
      expect([await tag('latest'), await tag('safe'), await tag('finalized')]).toEqual(['0x36', '0x32', '0x28']);
      // Block 2 is before Byzantium: its receipts carry the state root after each transaction.
      const old = (await rpc(node.url, 'eth_getBlockReceipts', ['0x2'])).result as Record<string, unknown>[];
      expect(old.length).toBe(59);
      expect(old[0]).toHaveProperty('root');
      expect(old[0]).not.toHaveProperty('status');
      const young = (await rpc(node.url, 'eth_getBlockReceipts', ['0x2a'])).result as Record<string, unknown>[];
      expect(young[0]).toHaveProperty('status');
      expect(young[0]).not.toHaveProperty('root');
      const blob = young.find((r) => r.type === '0x3');
      expect(blob).toMatchObject({ blobGasUsed: '0x20000', blobGasPrice: '0x1' });
      // Nothing is built: the head stays.
      expect((await rpc(node.url, 'eth_getBlockByNumber', ['pending', false])).result.number).toBe('0x36');
      // The product's revert code; --profile geth answers geth's.
      const revert = { to: '0x0ee3ab1371c93e7c0c281cc0c2107cdebc8b1930', input: '0x01' };
      expect((await rpc(node.url, 'eth_call', [revert, 'latest'])).error?.code).toBe(-32000);
    } finally {
      await node.kill('SIGTERM');
    }
    const geth = await spawnNode(['--genesis', genesis, '--datadir', datadir, '--no-build', '--profile', 'geth']);
    try {
      const revert = { to: '0x0ee3ab1371c93e7c0c281cc0c2107cdebc8b1930', input: '0x01' };
      expect((await rpc(geth.url, 'eth_call', [revert, 'latest'])).error?.code).toBe(3);
    } finally {
      await geth.kill('SIGTERM');
    }
  }, 120_000);
});
