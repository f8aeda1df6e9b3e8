// Nothing accepted is lost: a real `kill -9` of the node process, then a restart on the
// same datadir. Sealed blocks are still there with the same hashes; accepted transactions
// (pooled, queued, or pre-confirmed but not sealed) come back from the journal.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseGwei, type Hex } from 'viem';
import { devAccount, rpc } from '../helpers/node.js';
import { spawnNode, type NodeProcess } from '../helpers/process.js';
import { waitFor } from '../helpers/wait.js';
import { signTransfer } from '../helpers/transfer.js';

describe('crash and restart', () => {
  const datadir = mkdtempSync(join(tmpdir(), 'preconf-crash-'));
  let node: NodeProcess | undefined;
  afterAll(async () => {
    await node?.kill('SIGKILL');
    rmSync(datadir, { recursive: true, force: true });
  });

  const acct = devAccount(3);
  const tx = (nonce: number) =>
    signTransfer(acct, { to: '0x000000000000000000000000000000000000dEaD', nonce, value: 1000n + BigInt(nonce), maxFeePerGas: parseGwei('20') });

  it('keeps sealed blocks and every accepted transaction across kill -9', async () => {
    // 1 s blocks, 100 ms pre-confirmations.
    node = await spawnNode(['--datadir', datadir, '--block-time-ms', '1000', '--preconf-interval-ms', '100']);
    const sealedHash = (await rpc(node.url, 'eth_sendRawTransaction', [await tx(0)])).result as Hex;
    const sealed: { blockNumber: Hex; blockHash: Hex } = await waitFor(
      async () => {
        const r = (await rpc(node!.url, 'eth_getTransactionReceipt', [sealedHash])).result;
        return r && r.blockHash !== `0x${'00'.repeat(32)}` ? r : null;
      },
      5_000,
      'the first transfer to be sealed',
    );
    const sealedBlock = (await rpc(node.url, 'eth_getBlockByNumber', [sealed.blockNumber, false])).result;

    // Nonce 3 waits for 1 and 2 (queued); then 1 is sent and the node is killed at once,
    // before the block holding it can be sealed.
    const queued = (await rpc(node.url, 'eth_sendRawTransaction', [await tx(3)])).result as Hex;
    const justAccepted = (await rpc(node.url, 'eth_sendRawTransaction', [await tx(1)])).result as Hex;
    expect(queued).toMatch(/^0x[0-9a-f]{64}$/);
    expect(justAccepted).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await node.kill('SIGKILL')).toBe('SIGKILL');

    node = await spawnNode(['--datadir', datadir, '--block-time-ms', '1000', '--preconf-interval-ms', '100']);
    // The sealed block is unchanged.
    const again = (await rpc(node.url, 'eth_getBlockByNumber', [sealed.blockNumber, false])).result;
    expect(again.hash).toBe(sealedBlock.hash);
    expect(again.stateRoot).toBe(sealedBlock.stateRoot);
    expect((await rpc(node.url, 'eth_getTransactionReceipt', [sealedHash])).result.blockHash).toBe(sealed.blockHash);
    // The accepted transaction comes back and is included; the queued one still waits.
    const included = await waitFor(
      async () => (await rpc(node!.url, 'eth_getTransactionReceipt', [justAccepted])).result,
      5_000,
      'the journalled transaction to be included after the restart',
    );
    expect(included.status).toBe('0x1');
    const status = (await rpc(node.url, 'preconf_transactionStatus', [queued])).result;
    expect(status.status).toBe('queued');
    // Filling the gap releases it.
    await rpc(node.url, 'eth_sendRawTransaction', [await tx(2)]);
    const released = await waitFor(
      async () => (await rpc(node!.url, 'eth_getTransactionReceipt', [queued])).result,
      5_000,
      'the queued transaction to be released by the gap filler',
    );
    expect(released.status).toBe('0x1');

    // A clean stop (SIGTERM) exits 0 and seals what was pre-confirmed.
    const last = (await rpc(node.url, 'eth_sendRawTransaction', [await tx(4)])).result as Hex;
    await waitFor(async () => (await rpc(node!.url, 'eth_getTransactionReceipt', [last])).result, 2_000, 'the last transfer to be pre-confirmed');
    expect(await node.kill('SIGTERM')).toBe(0);
    node = await spawnNode(['--datadir', datadir]);
    const kept = (await rpc(node.url, 'eth_getTransactionReceipt', [last])).result;
    expect(kept.status).toBe('0x1');
    expect(kept.blockHash).not.toBe(`0x${'00'.repeat(32)}`);
    expect(node.output()).toContain('Chain id 31337');
  });
});
