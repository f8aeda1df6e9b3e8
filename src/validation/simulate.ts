// eth_simulateV1's first parameter: {blockStateCalls, traceTransfers?, validation?,
// returnFullTransactions?}. Shape checks here; sequencing rules and limits in the addon.

import type { SimulationBlock, SimulationPayload } from '../native.js';
import { callObject, simBlockOverrides, stateOverrides } from './call.js';
import { bool, expectKeys, fail, isObject, type Path } from './primitives.js';

const PAYLOAD_KEYS = new Set(['blockStateCalls', 'traceTransfers', 'validation', 'returnFullTransactions']);
const BLOCK_KEYS = new Set(['calls', 'stateOverrides', 'blockOverrides']);

export function simulatePayload(v: unknown, path: Path): SimulationPayload {
  if (!isObject(v)) throw fail(path, 'simulation payload must be an object with blockStateCalls');
  expectKeys(v, PAYLOAD_KEYS, path, 'simulation payload');
  if (!Array.isArray(v.blockStateCalls)) throw fail(path, 'blockStateCalls must be an array');
  const blocks = v.blockStateCalls.map((b: unknown, i: number): SimulationBlock => {
    const p = `${path}.blockStateCalls[${i}]`;
    if (!isObject(b)) throw fail(p, 'block state call must be an object');
    expectKeys(b, BLOCK_KEYS, p, 'block state call');
    const calls = b.calls ?? [];
    if (!Array.isArray(calls)) throw fail(`${p}.calls`, 'calls must be an array');
    return {
      calls: calls.map((c: unknown, j: number) => callObject(c, `${p}.calls[${j}]`)),
      stateOverrides: stateOverrides(b.stateOverrides, `${p}.stateOverrides`),
      blockOverrides: simBlockOverrides(randaoAsHash(b.blockOverrides), `${p}.blockOverrides`),
    };
  });
  return {
    blockStateCalls: blocks,
    traceTransfers: v.traceTransfers == null ? false : bool(v.traceTransfers, `${path}.traceTransfers`),
    validation: v.validation == null ? false : bool(v.validation, `${path}.validation`),
    returnFullTransactions: v.returnFullTransactions == null ? false : bool(v.returnFullTransactions, `${path}.returnFullTransactions`),
  };
}

/** viem (ox) sends `prevRandao` as a quantity where geth takes a 32-byte hash: accept both. */
function randaoAsHash(overrides: unknown): unknown {
  if (!isObject(overrides) || typeof overrides.prevRandao !== 'string') return overrides;
  const randao = overrides.prevRandao;
  if (!/^0x[0-9a-fA-F]{1,63}$/.test(randao)) return overrides;
  return { ...overrides, prevRandao: `0x${randao.slice(2).padStart(64, '0')}` };
}
