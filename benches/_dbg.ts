import { startAnvil } from './servers.js';
import { presign, flood } from './txs.js';
import { rpc } from './util.js';
import { devAccount } from '../test/helpers/node.js';
const a = await startAnvil();
await presign(a.url, 4000);
const t = Date.now();
const r = await flood(a, 4000, 10);
console.log(JSON.stringify({ ...r, proc: undefined }));
for (let i = 0; i < 2; i++) {
  console.log(Date.now() - t, await rpc(a.url, 'eth_blockNumber'), await rpc(a.url, 'eth_getTransactionCount', [devAccount(1).address, 'latest']), await rpc(a.url, 'eth_getTransactionCount', [devAccount(1).address, 'pending']), JSON.stringify(await rpc(a.url, 'txpool_status')));
  await new Promise((r) => setTimeout(r, 1000));
}
for (let i = 0; i < 3; i++) {
  const t1 = Date.now();
  await rpc(a.url, 'evm_mine');
  console.log('evm_mine', Date.now() - t1, 'ms', await rpc(a.url, 'eth_blockNumber'), JSON.stringify(await rpc(a.url, 'txpool_status')));
}
await a.stop();
