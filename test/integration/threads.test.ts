// --threads N: N event loops serve one port and share one chain. Every loop answers every
// method, receives every builder event for its subscribers, and shuts down cleanly.

import { afterAll, describe, expect, it } from 'vitest';
import { parseGwei, type Hex } from 'viem';
import { devAccount, rpc } from '../helpers/node.js';
import { spawnNode, type NodeProcess } from '../helpers/process.js';
import { RawWs } from '../helpers/ws.js';

describe('several event loops', () => {
  let node: NodeProcess | undefined;
  afterAll(() => {
    node?.child.kill('SIGKILL');
  });

  it('serves one chain from 3 threads: reads, subscriptions on every loop, sync sends, clean exit', async () => {
    node = await spawnNode(['--ephemeral', '--threads', '3', '--preconf-interval-ms', '50', '--block-time-ms', '500']);
    expect(node.output()).toContain('3 event loops');
    // Many short connections land on different loops; all see the same chain.
    const heads = new Set<string>();
    for (let i = 0; i < 30; i++) {
      const r = await fetch(node.url, { method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266","earliest"]}' });
      heads.add(((await r.json()) as { result: string }).result);
    }
    expect([...heads]).toEqual(['0x21e19e0c9bab2400000']);
    // Subscribers on several connections (spread over the loops) all get the same stream.
    const sockets = await Promise.all(Array.from({ length: 6 }, () => RawWs.open(node!.url.replace('http', 'ws'))));
    const subs = await Promise.all(sockets.map((s) => s.request('eth_subscribe', ['newFlashblockTransactions']).then((r) => r.result as string)));
    const acct = devAccount(4);
    const raw = await acct.signTransaction({ chainId: 31337, type: 'eip1559', to: acct.address, gas: 21000n, maxFeePerGas: parseGwei('20'), maxPriorityFeePerGas: 1n, nonce: 0 });
    // The synchronous send may land on any loop and still sees its pre-confirmation.
    const receipt = (await rpc(node.url, 'eth_sendRawTransactionSync', [raw])).result;
    expect(receipt.status).toBe('0x1');
    const hash = receipt.transactionHash as Hex;
    await Promise.all(sockets.map((s, i) => s.waitFor(subs[i]!, (r) => r === hash, 5_000)));
    for (const s of sockets) s.close();
    node.child.kill('SIGTERM');
    expect(await node.exited).toBe(0);
  });
});
