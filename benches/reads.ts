// The read scenarios: request bodies for the load generator. Each scenario cycles over a
// few dozen distinct requests (different accounts, slots and holders), all at `latest`
// unless said otherwise, so both servers answer the same thing.

import type { Address } from 'viem';
import { balanceOfData, balanceSlot, type Fixtures } from './fixtures.js';

export interface ReadScenario {
  name: string;
  description: string;
  bodies: string[];
}

type Call = { method: string; params: unknown[] };

const body = (c: Call, id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: c.method, params: c.params });
const batch = (calls: Call[]) => JSON.stringify(calls.map((c, i) => ({ jsonrpc: '2.0', id: i + 1, method: c.method, params: c.params })));

const balance = (a: Address, tag = 'latest'): Call => ({ method: 'eth_getBalance', params: [a, tag] });
const storage = (f: Fixtures, a: Address): Call => ({ method: 'eth_getStorageAt', params: [f.token, balanceSlot(a), 'latest'] });
const code = (f: Fixtures): Call => ({ method: 'eth_getCode', params: [f.token, 'latest'] });
const call = (f: Fixtures, a: Address): Call => ({
  method: 'eth_call',
  params: [{ to: f.token, data: balanceOfData(a) }, 'latest'],
});

const callAt = (f: Fixtures, a: Address, tag: string): Call => ({
  method: 'eth_call',
  params: [{ to: f.token, data: balanceOfData(a) }, tag],
});

/** geth's eth_simulateV1 with one block of one call (balanceOf). */
const simulate = (f: Fixtures, a: Address): Call => ({
  method: 'eth_simulateV1',
  params: [{ blockStateCalls: [{ calls: [{ to: f.token, data: balanceOfData(a) }] }] }, 'latest'],
});

const estimate = (f: Fixtures, a: Address): Call => ({
  method: 'eth_estimateGas',
  params: [{ from: a, to: f.token, data: balanceOfData(a) }, 'latest'],
});

/** 100 requests starting at holder `k`, rotating over the four kinds of read. */
function mixed(f: Fixtures, k: number): Call[] {
  return Array.from({ length: 100 }, (_, i) => {
    const a = f.holders[(k + i) % f.holders.length]!;
    return [balance(a), storage(f, a), code(f), call(f, a)][i % 4]!;
  });
}

export function readScenarios(f: Fixtures): ReadScenario[] {
  const each = (make: (a: Address) => Call) => f.holders.map((a, i) => body(make(a), i + 1));
  const batches = (make: (k: number) => Call[]) => Array.from({ length: 8 }, (_, k) => batch(make(k * 8)));
  return [
    { name: 'eth_getBalance', description: '64 accounts (10 funded, 54 absent), latest', bodies: each((a) => balance(a)) },
    { name: 'eth_getBalance pending', description: 'the same at the pending tag', bodies: each((a) => balance(a, 'pending')) },
    { name: 'eth_getStorageAt', description: 'Token balance slots of 64 holders', bodies: each((a) => storage(f, a)) },
    { name: 'eth_getCode', description: 'the Token runtime code', bodies: f.holders.map((_, i) => body(code(f), i + 1)) },
    { name: 'eth_call balanceOf', description: 'Token.balanceOf for 64 holders', bodies: each((a) => call(f, a)) },
    { name: 'eth_call balanceOf pending', description: 'the same at the pending tag', bodies: each((a) => callAt(f, a, 'pending')) },
    { name: 'eth_simulateV1 1×1', description: 'one block of one balanceOf call, latest', bodies: each((a) => simulate(f, a)) },
    { name: 'eth_estimateGas balanceOf', description: 'the same call from each holder, estimated', bodies: each((a) => estimate(f, a)) },
    {
      name: 'batch 100 eth_getBalance',
      description: 'one HTTP request = 100 balance reads (req/s × 100 = calls/s)',
      bodies: batches((k) => Array.from({ length: 100 }, (_, i) => balance(f.holders[(k + i) % f.holders.length]!))),
    },
    {
      name: 'batch 100 eth_call',
      description: 'one HTTP request = 100 balanceOf calls',
      bodies: batches((k) => Array.from({ length: 100 }, (_, i) => call(f, f.holders[(k + i) % f.holders.length]!))),
    },
    { name: 'batch 100 mixed', description: '25 each of getBalance, getStorageAt, getCode, eth_call', bodies: batches((k) => mixed(f, k)) },
  ];
}
