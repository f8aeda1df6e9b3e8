// The Engine API's parameters: shapes checked here (-32602 naming the member), handed on
// as canonical JSON text; which members a method version and a fork take is the chain's
// rule (crates/chain/src/engine/rules.rs), answered with the Engine API's own codes.

import { address, argPath, bool, expectKeys, fail, hash32, hexBytes, isObject, quantity64, show, type Path } from '../validation/primitives.js';

const STATE_KEYS = new Set(['headBlockHash', 'safeBlockHash', 'finalizedBlockHash']);
const ATTRIBUTE_KEYS = new Set([
  'timestamp',
  'prevRandao',
  'suggestedFeeRecipient',
  'withdrawals',
  'parentBeaconBlockRoot',
  'transactions',
  'noTxPool',
  'gasLimit',
  'eip1559Params',
  'minBaseFee',
]);
const WITHDRAWAL_KEYS = new Set(['index', 'validatorIndex', 'address', 'amount']);

/** ForkchoiceStateV1 as JSON text. */
export function forkchoiceState(v: unknown): string {
  const path = argPath(0);
  if (!isObject(v)) throw fail(path, `forkchoice state must be an object, got ${show(v)}`);
  expectKeys(v, STATE_KEYS, path, 'forkchoice state');
  return JSON.stringify({
    headBlockHash: hash32(v.headBlockHash, `${path}.headBlockHash`),
    safeBlockHash: hash32(v.safeBlockHash, `${path}.safeBlockHash`),
    finalizedBlockHash: hash32(v.finalizedBlockHash, `${path}.finalizedBlockHash`),
  });
}

export function withdrawals(v: unknown, path: Path): unknown[] {
  if (!Array.isArray(v)) throw fail(path, `withdrawals must be an array, got ${show(v)}`);
  return v.map((w, i) => {
    const at = `${path}[${i}]`;
    if (!isObject(w)) throw fail(at, `withdrawal must be an object, got ${show(w)}`);
    expectKeys(w, WITHDRAWAL_KEYS, at, 'withdrawal');
    return {
      index: quantity64(w.index, `${at}.index`),
      validatorIndex: quantity64(w.validatorIndex, `${at}.validatorIndex`),
      address: address(w.address, `${at}.address`),
      amount: quantity64(w.amount, `${at}.amount`),
    };
  });
}

/** PayloadAttributes (V1–V3, with OP's members) as JSON text, or null when absent. */
export function payloadAttributes(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  const path = argPath(1);
  if (!isObject(v)) throw fail(path, `payload attributes must be an object or null, got ${show(v)}`);
  expectKeys(v, ATTRIBUTE_KEYS, path, 'payload attributes');
  const out: Record<string, unknown> = {
    timestamp: quantity64(v.timestamp, `${path}.timestamp`, 'timestamp'),
    prevRandao: hash32(v.prevRandao, `${path}.prevRandao`, 'prevRandao'),
    suggestedFeeRecipient: address(v.suggestedFeeRecipient, `${path}.suggestedFeeRecipient`),
  };
  if (v.withdrawals != null) out.withdrawals = withdrawals(v.withdrawals, `${path}.withdrawals`);
  if (v.parentBeaconBlockRoot != null) out.parentBeaconBlockRoot = hash32(v.parentBeaconBlockRoot, `${path}.parentBeaconBlockRoot`, 'parentBeaconBlockRoot');
  if (v.transactions != null) {
    if (!Array.isArray(v.transactions)) throw fail(`${path}.transactions`, `transactions must be an array, got ${show(v.transactions)}`);
    out.transactions = v.transactions.map((t, i) => hexBytes(t, `${path}.transactions[${i}]`, 'transaction'));
  }
  if (v.noTxPool != null) out.noTxPool = bool(v.noTxPool, `${path}.noTxPool`, 'noTxPool');
  if (v.gasLimit != null) out.gasLimit = quantity64(v.gasLimit, `${path}.gasLimit`, 'gasLimit');
  if (v.eip1559Params != null) {
    const p = hexBytes(v.eip1559Params, `${path}.eip1559Params`, 'eip1559Params');
    if (p.length !== 18) throw fail(`${path}.eip1559Params`, `hex string of 8 bytes expected for eip1559Params, got ${show(p)}`);
    out.eip1559Params = p;
  }
  if (v.minBaseFee != null) out.minBaseFee = quantity64(v.minBaseFee, `${path}.minBaseFee`, 'minBaseFee');
  return JSON.stringify(out);
}

/** A payload id: 8 bytes of hex. */
export function payloadId(v: unknown): string {
  if (typeof v !== 'string' || !/^0x[0-9a-fA-F]{16}$/.test(v)) throw fail(argPath(0), `hex string of 8 bytes expected for payload id, got ${show(v)}`);
  return v.toLowerCase();
}

/** engine_exchangeCapabilities' list of method names. */
export function capabilities(v: unknown): string[] {
  if (!Array.isArray(v) || v.some((m) => typeof m !== 'string')) throw fail(argPath(0), `capabilities must be an array of method names, got ${show(v)}`);
  return v as string[];
}

/** getPayloadBodiesByHashV1's list of block hashes. */
export function blockHashes(v: unknown): string[] {
  if (!Array.isArray(v)) throw fail(argPath(0), `block hashes must be an array, got ${show(v)}`);
  return v.map((h, i) => hash32(h, `${argPath(0)}[${i}]`, 'block hash'));
}

/** getPayloadBodiesByRangeV1's start or count: a 64-bit quantity. */
export const rangeBound = (v: unknown, index: number, what: string): string => quantity64(v, argPath(index), what);
