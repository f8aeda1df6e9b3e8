// Writes through a replica go to the leader and come back unchanged: each error a client
// can get from the leader directly (geth's codes and messages) comes back the same through
// a replica, and a transaction sent through a replica is visible on that replica when its
// eth_sendRawTransactionSync answers.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseGwei, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { devAccount, rawPost } from '../helpers/node.js';
import { call, Cluster } from '../helpers/replicas.js';
import { waitFor } from '../helpers/wait.js';
import { signTransfer } from '../helpers/transfer.js';

const sink = `0x${'5a'.repeat(20)}` as const;

async function send(url: string, method: string, params: unknown[]): Promise<any> {
  const r = await rawPost(url, JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }));
  return r.json;
}

describe('writes through a replica', () => {
  let cluster: Cluster;
  let leader: string;
  let replica: string;
  beforeAll(async () => {
    cluster = await Cluster.start({ replicas: 1, chainArgs: ['--preconf-interval-ms', '100', '--block-time-ms', '500'] });
    leader = cluster.leader.url;
    replica = cluster.replica(0).url;
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  const account = devAccount(7);
  const transfer = (nonce: number, tip = 1n, value = 1n) => signTransfer(account, { to: sink, nonce, value, maxPriorityFeePerGas: tip });

  it('are forwarded, and answered with the leader result', async () => {
    const raw = await transfer(0);
    const hash = (await send(replica, 'eth_sendRawTransaction', [raw])).result as Hex;
    expect(hash).toMatch(/^0x[0-9a-f]{64}$/);
    // The leader has it; the replica shows it once applied.
    const receipt = await waitFor(async () => (await send(replica, 'eth_getTransactionReceipt', [hash])).result, 10_000, 'the receipt on the replica');
    expect(receipt.status).toBe('0x1');
    expect((await send(leader, 'eth_getTransactionReceipt', [hash])).result).toEqual(receipt);
  });

  it("return the leader's errors unchanged: code, message and data", async () => {
    const nonce = Number(await call(leader, 'eth_getTransactionCount', [account.address, 'latest']));
    const funded = await transfer(nonce + 20, 5n); // queued: a nonce gap keeps it in the pool
    expect((await send(leader, 'eth_sendRawTransaction', [funded])).result).toBeDefined();
    const broke = privateKeyToAccount(generatePrivateKey());
    const cases: [string, string, unknown[]][] = [
      ['already known', 'eth_sendRawTransaction', [funded]],
      ['replacement transaction underpriced', 'eth_sendRawTransaction', [await transfer(nonce + 20, 4n, 2n)]],
      ['nonce too low', 'eth_sendRawTransaction', [await transfer(0, 1n, 9n)]],
      ['insufficient funds', 'eth_sendRawTransaction', [await signTransfer(broke, { to: sink, nonce: 0 })]],
      [
        'invalid chain id',
        'eth_sendRawTransaction',
        [
          await account.signTransaction({
            chainId: 1,
            type: 'eip1559',
            to: sink,
            gas: 21_000n,
            maxFeePerGas: parseGwei('50'),
            maxPriorityFeePerGas: 1n,
            nonce,
          }),
        ],
      ],
      ['intrinsic gas too low', 'eth_sendRawTransaction', [await signTransfer(account, { to: sink, nonce, value: 0n, gas: 20_000n })]],
      ['invalid transaction', 'eth_sendRawTransaction', ['0x02']],
      ['hex string', 'eth_sendRawTransaction', ['not hex']],
      ['unknown account', 'eth_sendTransaction', [{ from: broke.address, to: sink }]],
      ['timeout must be', 'eth_sendRawTransactionSync', [await transfer(nonce + 31), 0]],
    ];
    for (const [what, method, params] of cases) {
      const direct = await send(leader, method, params);
      const forwarded = await send(replica, method, params);
      expect(direct.error, `${what}: the leader refuses it`).toBeDefined();
      // The second send of the same transaction may now say "already known": compare with
      // the leader's answer to that same second send.
      const again = await send(leader, method, params);
      expect([JSON.stringify(direct.error), JSON.stringify(again.error)], what).toContain(JSON.stringify(forwarded.error));
      expect(JSON.stringify(forwarded.error).toLowerCase(), what).toContain(what.toLowerCase().split(' ')[0]);
    }
    // EIP-7966 timeout: code 4 with the hash as data, as the leader answers it.
    const timedOut = await send(replica, 'eth_sendRawTransactionSync', [await transfer(nonce + 40), 200]);
    expect(timedOut.error.code).toBe(4);
    expect(timedOut.error.data).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it("answers txpool_* with the leader's pool", async () => {
    // The queued transactions of the previous test (nonce gaps) stay in the leader's pool.
    const [direct, forwarded] = await Promise.all([
      send(leader, 'txpool_contentFrom', [account.address]),
      send(replica, 'txpool_contentFrom', [account.address]),
    ]);
    expect(Object.keys(direct.result.queued).length).toBeGreaterThan(0);
    expect(forwarded.result.queued).toEqual(direct.result.queued);
    const status = await send(replica, 'txpool_status', []);
    expect(Number(status.result.queued)).toBeGreaterThanOrEqual(Object.keys(direct.result.queued).length);
    expect((await send(replica, 'txpool_contentFrom', ['0x12'])).error, 'the leader refuses a bad address').toMatchObject({ code: -32602 });
  });

  it('eth_sendRawTransactionSync answers once the replica itself shows the transaction', async () => {
    const pendingNonce = Number(await call(replica, 'eth_getTransactionCount', [account.address, 'pending']));
    // The pending nonce is the leader's (it has the pool).
    expect(pendingNonce).toBe(Number(await call(leader, 'eth_getTransactionCount', [account.address, 'pending'])));
    const before = BigInt(await call(replica, 'eth_getBalance', [sink, 'pending']));
    const r = await send(replica, 'eth_sendRawTransactionSync', [await transfer(pendingNonce, 1n, 1000n), 5000]);
    expect(r.result.status).toBe('0x1');
    // No waiting: the replica already serves the transaction and its effect.
    const [status, balance, tx] = await Promise.all([
      call(replica, 'preconf_transactionStatus', [r.result.transactionHash]),
      call(replica, 'eth_getBalance', [sink, 'pending']),
      call(replica, 'eth_getTransactionByHash', [r.result.transactionHash]),
    ]);
    expect(['preconfirmed', 'included']).toContain(status.status);
    expect(BigInt(balance)).toBe(before + 1000n);
    expect(tx.hash).toBe(r.result.transactionHash);
  });

  it('eth_sendTransaction (dev accounts) is signed and sent by the leader', async () => {
    const r = await send(replica, 'eth_sendTransaction', [{ from: devAccount(8).address, to: sink, value: '0x7' }]);
    expect(r.result).toMatch(/^0x[0-9a-f]{64}$/);
    // Known right away through the replica (from the leader's pool until it is pre-confirmed).
    expect((await send(replica, 'eth_getTransactionByHash', [r.result])).result.hash).toBe(r.result);
    const receipt = await waitFor(async () => (await send(replica, 'eth_getTransactionReceipt', [r.result])).result, 10_000, 'its receipt on the replica');
    expect(receipt.from).toBe(devAccount(8).address.toLowerCase());
  });
});
