// Kill -9 while blocks are being sealed leaves a store that opens at a sealed
// block with a matching root. The node seals at every tick (block time = interval) while
// senders create fresh accounts, so a random kill lands inside a seal's transaction most
// of the time; after each kill `preconf-node verify` recomputes the head's state root from
// the stored values and compares it with the header and with the persisted trie, and the
// node restarts on the datadir at or after the last block it had reported durable (`safe`),
// and at most one block behind the last it had published as sealed.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { devAccount, rpc } from '../helpers/node.js';
import { spawnNode, type NodeProcess } from '../helpers/process.js';
import { waitFor } from '../helpers/wait.js';
import { sendUntilStopped } from '../helpers/transfer.js';

const bin = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'preconf-node.cjs');

describe('kill -9 during seals', () => {
  const datadir = mkdtempSync(join(tmpdir(), 'preconf-crash-seal-'));
  let node: NodeProcess | undefined;
  afterAll(async () => {
    await node?.kill('SIGKILL');
    rmSync(datadir, { recursive: true, force: true });
  });

  it('every kill leaves a store whose head root verifies, and the node reopens at or after the last published seal', async () => {
    const senders = [1, 2, 3, 4].map(devAccount);
    const nonces = senders.map(() => 0);
    for (let round = 0; round < 5; round++) {
      node = await spawnNode(['--datadir', datadir, '--block-time-ms', '50', '--preconf-interval-ms', '50']);
      const url = node.url;
      const startHead = BigInt((await rpc(url, 'eth_blockNumber')).result);
      // Resume each sender at its nonce in this node's pending state (a kill may have
      // lost nothing, or the journal may hold what was sent).
      for (const [i, s] of senders.entries()) nonces[i] = Number(BigInt((await rpc(url, 'eth_getTransactionCount', [s.address, 'pending'])).result));
      const load = sendUntilStopped(url, senders, nonces);
      // Let several blocks seal, then kill at a moment that depends on the round.
      await waitFor(async () => BigInt((await rpc(url, 'eth_blockNumber')).result) >= startHead + 5n, 10_000, 'five seals');
      await new Promise((r) => setTimeout(r, 37 * round + 13)); // vary where in the seal cycle the kill lands
      // `safe` names the newest durable block; `latest` may be ahead, commits still in
      // flight (docs/storage.md, Durability): a kill may lose those blocks, never their
      // transactions, and never a durable one.
      const durable = BigInt((await rpc(url, 'eth_getBlockByNumber', ['safe', false])).result.number);
      const published = BigInt((await rpc(url, 'eth_blockNumber')).result);
      await node.kill('SIGKILL');
      await load.stop();

      const verify = spawnSync(process.execPath, [bin, 'verify', '--datadir', datadir], { encoding: 'utf8' });
      expect(verify.stdout + verify.stderr, `round ${round}`).toContain('state root matches');
      expect(verify.status).toBe(0);
      const head = BigInt(/head block (\d+)/.exec(verify.stdout)![1]!);
      expect(head, `round ${round}: a block reported durable (safe) was kept`).toBeGreaterThanOrEqual(durable);
      // Blocks not yet durable are in memory (up to 16 when the disk falls behind:
      // crash-batched.test.ts); their transactions are in the journal.
      expect(head, `round ${round}: at most the blocks in flight were lost`).toBeGreaterThanOrEqual(published - 16n);
    }
    // And the node serves the store after the last kill.
    node = await spawnNode(['--datadir', datadir, '--block-time-ms', '50', '--preconf-interval-ms', '50']);
    expect(BigInt((await rpc(node.url, 'eth_blockNumber')).result)).toBeGreaterThan(20n);
  });
});
