// `preconf-node import` of an OP chain's blocks: a chain built by an `--optimism` node (every
// block opening with its L1-info deposit, transfers paying the L1 data and operator fees) is
// exported and imported into a fresh datadir with `import --optimism`: every block executes
// on the OP EVM and comes out with the same hash. Base mainnet's block 1 on Base's genesis is
// imported in crates/chain's tests (tests/import/op.rs).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseGwei, toHex, type Hex } from 'viem';
import { afterAll, describe, expect, it } from 'vitest';
import { devAccount, rpc } from '../helpers/node.js';
import { runCommand as run, spawnNode, type NodeProcess } from '../helpers/process.js';
import { waitFor } from '../helpers/wait.js';

describe('preconf-node import on the OP dev chain', () => {
  const dir = mkdtempSync(join(tmpdir(), 'op-import-it-'));
  let node: NodeProcess | undefined;
  afterAll(async () => {
    await node?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('exports an --optimism chain and imports it with the same block hashes', async () => {
    const source = join(dir, 'source');
    const op = ['--optimism', '--l1-operator-fee-scalar', '1000000', '--l1-operator-fee-constant', '7'];
    node = await spawnNode([...op, '--datadir', source, '--block-time-ms', '500', '--preconf-interval-ms', '100']);
    const url = node.url;
    const sender = devAccount(0);
    const fee = { maxFeePerGas: parseGwei('20'), maxPriorityFeePerGas: 1n, chainId: 31337, type: 'eip1559' as const, gas: 21000n };
    const hashes: Hex[] = [];
    for (let nonce = 0; nonce < 3; nonce++) {
      const raw = await sender.signTransaction({ ...fee, nonce, to: devAccount(1).address, value: 1000n + BigInt(nonce) });
      const r = await rpc(url, 'eth_sendRawTransaction', [raw]);
      expect(r.error, JSON.stringify(r.error)).toBeUndefined();
      hashes.push(r.result as Hex);
    }
    const receipt = async (h: Hex): Promise<any> => (await rpc(url, 'eth_getTransactionReceipt', [h])).result;
    await waitFor(async () => (await receipt(hashes[2]!)) !== null, 15_000, 'the transfers sealed');
    const included = BigInt((await receipt(hashes[2]!)).blockNumber);
    expect(await node.kill('SIGTERM')).toBe(0);
    node = undefined;

    const file = join(dir, 'chain.rlp');
    const exported = await run(['export', '--datadir', source, file]);
    expect(exported.code, exported.stderr).toBe(0);
    const head = Number(/exported blocks 1 to (\d+)/.exec(exported.stdout)![1]);
    expect(BigInt(head)).toBeGreaterThanOrEqual(included);

    const copy = join(dir, 'copy');
    const imported = await run(['import', '--optimism', '--datadir', copy, '--quiet', file]);
    expect(imported.code, imported.stderr).toBe(0);
    const m = /head (\d+) (0x[0-9a-f]{64})/.exec(imported.stdout);
    expect(Number(m![1])).toBe(head);

    // Both datadirs served side by side: every block has the same hash; the transfers'
    // receipts carry the same fees.
    const a = await spawnNode(['--optimism', '--datadir', source, '--no-build']);
    const b = await spawnNode(['--optimism', '--datadir', copy, '--no-build']);
    try {
      for (let n = 1; n <= head; n++) {
        const [ha, hb] = await Promise.all([a, b].map(async (x) => (await rpc(x.url, 'eth_getBlockByNumber', [toHex(n), false])).result));
        expect(hb.hash, `block ${n}`).toBe(ha.hash);
      }
      expect((await rpc(a.url, 'eth_getBlockByNumber', [toHex(head), false])).result.hash).toBe(m![2]);
      for (const h of hashes) {
        const [ra, rb] = await Promise.all([a, b].map(async (x) => (await rpc(x.url, 'eth_getTransactionReceipt', [h])).result));
        expect(rb).toEqual(ra);
        expect(rb.operatorFeeConstant).toBe('0x7');
        expect(BigInt(rb.l1Fee)).toBeGreaterThan(0n);
      }
    } finally {
      await a.kill('SIGTERM');
      await b.kill('SIGTERM');
    }

    // --optimism is the embedded chain: not beside a genesis file.
    const both = await run(['import', '--optimism', '--genesis', file, '--datadir', join(dir, 'x'), file]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--optimism excludes --genesis');
  }, 120_000);
});
