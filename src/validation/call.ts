// Transaction call objects, state overrides and block overrides (eth_call, eth_estimateGas,
// eth_simulateV1), normalised to the JSON the addon deserialises: the types are the addon's
// (generated from crates/rpc/src/shapes), so a field the addon does not read does not compile.

import {
  accountCode,
  address,
  bool,
  expectKeys,
  fail,
  hash32,
  hexBytes,
  isObject,
  quantity,
  quantity128,
  quantity64,
  quantity8,
  storageSlot,
  type Path,
} from './primitives.js';
import type {
  AccessListEntry,
  AccountOverride,
  Authorization,
  BlockOverrides,
  SimBlockOverrides,
  StateOverrides,
  TransactionCall,
  Withdrawal,
} from '../native.js';

// Widths as the addon deserialises them (alloy's TransactionRequest): checked here so that
// an out-of-range value gets a message naming the field, not a deserialiser's.
const FEE_FIELDS = ['gasPrice', 'maxFeePerGas', 'maxPriorityFeePerGas', 'maxFeePerBlobGas'] as const; // u128
const QUANTITY64_FIELDS = ['gas', 'nonce', 'chainId'] as const; // u64

/** geth's TransactionArgs: unknown members are ignored, as geth ignores them. */
export function callObject(v: unknown, path: Path, requireTo = false): TransactionCall {
  if (!isObject(v)) throw fail(path, `transaction call object expected, got ${JSON.stringify(v)}`);
  const out: TransactionCall = {};
  if (v.from !== undefined && v.from !== null) out.from = address(v.from, `${path}.from`);
  if (v.to !== undefined && v.to !== null) out.to = address(v.to, `${path}.to`);
  else if (requireTo) throw fail(path, 'missing "to" in transaction call object');
  for (const key of FEE_FIELDS) {
    if (v[key] !== undefined && v[key] !== null) out[key] = quantity128(v[key], `${path}.${key}`, key);
  }
  if (v.value !== undefined && v.value !== null) out.value = quantity(v.value, `${path}.value`, 'value');
  for (const key of QUANTITY64_FIELDS) {
    if (v[key] !== undefined && v[key] !== null) out[key] = quantity64(v[key], `${path}.${key}`, key);
  }
  if (v.type !== undefined && v.type !== null) out.type = quantity8(v.type, `${path}.type`, 'type');
  const data = v.data ?? undefined;
  const input = v.input ?? undefined;
  if (data !== undefined && input !== undefined) {
    const d = hexBytes(data, `${path}.data`);
    const i = hexBytes(input, `${path}.input`);
    if (d !== i) {
      throw fail(path, 'both "data" and "input" are set and not equal. Please use "input" to pass transaction call data');
    }
    out.input = i;
  } else if (input !== undefined) out.input = hexBytes(input, `${path}.input`);
  else if (data !== undefined) out.input = hexBytes(data, `${path}.data`);
  if (out.gasPrice !== undefined && (out.maxFeePerGas !== undefined || out.maxPriorityFeePerGas !== undefined)) {
    throw fail(path, 'both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified');
  }
  if (v.accessList !== undefined && v.accessList !== null) out.accessList = accessList(v.accessList, `${path}.accessList`);
  if (v.authorizationList !== undefined && v.authorizationList !== null) {
    out.authorizationList = authorizationList(v.authorizationList, `${path}.authorizationList`);
  }
  if (v.blobVersionedHashes !== undefined && v.blobVersionedHashes !== null) {
    if (!Array.isArray(v.blobVersionedHashes)) throw fail(`${path}.blobVersionedHashes`, 'array of hashes expected');
    out.blobVersionedHashes = v.blobVersionedHashes.map((h, i) => hash32(h, `${path}.blobVersionedHashes[${i}]`));
  }
  return out;
}

function accessList(v: unknown, path: Path): AccessListEntry[] {
  if (!Array.isArray(v)) throw fail(path, 'access list must be an array');
  return v.map((item, i): AccessListEntry => {
    const p = `${path}[${i}]`;
    if (!isObject(item)) throw fail(p, 'access list entry must be an object');
    const keys = item.storageKeys ?? [];
    if (!Array.isArray(keys)) throw fail(`${p}.storageKeys`, 'storageKeys must be an array');
    return {
      address: address(item.address, `${p}.address`),
      storageKeys: keys.map((k, j) => hash32(k, `${p}.storageKeys[${j}]`, 'storage key')),
    };
  });
}

function authorizationList(v: unknown, path: Path): Authorization[] {
  if (!Array.isArray(v)) throw fail(path, 'authorization list must be an array');
  return v.map((item, i): Authorization => {
    const p = `${path}[${i}]`;
    if (!isObject(item)) throw fail(p, 'authorization must be an object');
    const yParity = item.yParity ?? item.v;
    return {
      chainId: quantity(item.chainId, `${p}.chainId`, 'chainId'),
      address: address(item.address, `${p}.address`),
      nonce: quantity64(item.nonce, `${p}.nonce`, 'nonce'),
      yParity: quantity8(yParity, `${p}.yParity`, 'yParity'),
      r: quantity(item.r, `${p}.r`, 'r'),
      s: quantity(item.s, `${p}.s`, 's'),
    };
  });
}

const OVERRIDE_KEYS = new Set(['balance', 'nonce', 'code', 'state', 'stateDiff', 'movePrecompileToAddress']);

/** Accounts and storage slots one set of state overrides may name. geth has no limit; an
 *  override is applied (and re-applied by eth_estimateGas's search, eth_createAccessList's
 *  reruns) for every execution, so its size multiplies work that gas does not bound. */
export const MAX_OVERRIDE_ACCOUNTS = 1024;
export const MAX_OVERRIDE_SLOTS = 16_384;

/** geth's StateOverride: address -> {balance, nonce, code, state | stateDiff, movePrecompileToAddress}. */
export function stateOverrides(v: unknown, path: Path): StateOverrides | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw fail(path, 'state overrides must be an object keyed by address');
  const entries = Object.entries(v);
  if (entries.length > MAX_OVERRIDE_ACCOUNTS) {
    throw fail(path, `too many accounts in state overrides: ${entries.length} > ${MAX_OVERRIDE_ACCOUNTS}`);
  }
  let slots = 0;
  for (const [, override] of entries) {
    if (!isObject(override)) continue;
    for (const key of ['state', 'stateDiff'] as const) {
      const m = override[key];
      if (isObject(m)) slots += Object.keys(m).length;
    }
  }
  if (slots > MAX_OVERRIDE_SLOTS) throw fail(path, `too many storage slots in state overrides: ${slots} > ${MAX_OVERRIDE_SLOTS}`);
  const out: StateOverrides = {};
  for (const [addr, override] of entries) {
    const a = address(addr, `${path} (override key)`);
    const p = `${path}.${addr}`;
    if (!isObject(override)) throw fail(p, 'account override must be an object');
    expectKeys(override, OVERRIDE_KEYS, p, 'account override');
    const o: AccountOverride = {};
    if (override.balance != null) o.balance = quantity(override.balance, `${p}.balance`, 'balance');
    if (override.nonce != null) o.nonce = quantity64(override.nonce, `${p}.nonce`, 'nonce');
    if (override.code != null) o.code = accountCode(override.code, `${p}.code`);
    if (override.state != null && override.stateDiff != null) {
      throw fail(p, `account ${a} has both 'state' and 'stateDiff'`);
    }
    if (override.state != null) o.state = slotMap(override.state, `${p}.state`);
    if (override.stateDiff != null) o.stateDiff = slotMap(override.stateDiff, `${p}.stateDiff`);
    if (override.movePrecompileToAddress != null) {
      o.movePrecompileToAddress = address(override.movePrecompileToAddress, `${p}.movePrecompileToAddress`);
    }
    if (a in out) throw fail(p, `duplicate override for ${a}`);
    out[a] = o;
  }
  return out;
}

function slotMap(v: unknown, path: Path): Record<string, string> {
  if (!isObject(v)) throw fail(path, 'storage override must be an object of slot -> value');
  const out: Record<string, string> = {};
  for (const [slot, value] of Object.entries(v)) {
    out[storageSlot(slot, `${path} (slot)`)] = hash32(value, `${path}.${slot}`, 'storage value');
  }
  return out;
}

const BLOCK_OVERRIDE_KEYS = new Set([
  'number',
  'difficulty',
  'time',
  'gasLimit',
  'feeRecipient',
  'prevRandao',
  'baseFeePerGas',
  'blobBaseFee',
  'beaconRoot',
  'withdrawals',
]);

/** geth's BlockOverrides, as eth_call and debug_traceCall take them. `withdrawals` is
 *  checked (geth accepts it) but only eth_simulateV1 uses it (`simBlockOverrides`). */
export const blockOverrides = (v: unknown, path: Path): BlockOverrides | undefined => parseBlockOverrides(v, path)?.header;

/** A simulated block's overrides: the block overrides and its withdrawals. */
export function simBlockOverrides(v: unknown, path: Path): SimBlockOverrides | undefined {
  const o = parseBlockOverrides(v, path);
  if (o === undefined) return undefined;
  return o.withdrawals === undefined ? o.header : { ...o.header, withdrawals: o.withdrawals };
}

function parseBlockOverrides(v: unknown, path: Path): { header: BlockOverrides; withdrawals?: Withdrawal[] } | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw fail(path, 'block overrides must be an object');
  expectKeys(v, BLOCK_OVERRIDE_KEYS, path, 'block overrides');
  const out: BlockOverrides = {};
  // Widths as the addon's EVM holds them: the base fee is a u64 and the blob base fee a
  // u128 there (geth takes any 256-bit value), so larger values are refused here by name
  // rather than by a deserialiser, or silently saturated.
  for (const key of ['number', 'time', 'gasLimit', 'baseFeePerGas'] as const) {
    if (v[key] != null) out[key] = quantity64(v[key], `${path}.${key}`, key);
  }
  if (v.blobBaseFee != null) out.blobBaseFee = quantity128(v.blobBaseFee, `${path}.blobBaseFee`, 'blobBaseFee');
  if (v.difficulty != null) out.difficulty = quantity(v.difficulty, `${path}.difficulty`, 'difficulty');
  if (v.feeRecipient != null) out.feeRecipient = address(v.feeRecipient, `${path}.feeRecipient`);
  if (v.prevRandao != null) out.prevRandao = hash32(v.prevRandao, `${path}.prevRandao`, 'prevRandao');
  if (v.beaconRoot != null) out.beaconRoot = hash32(v.beaconRoot, `${path}.beaconRoot`, 'beaconRoot');
  if (v.withdrawals == null) return { header: out };
  if (!Array.isArray(v.withdrawals)) throw fail(`${path}.withdrawals`, 'withdrawals must be an array');
  const withdrawals = v.withdrawals.map((w, i): Withdrawal => {
    const p = `${path}.withdrawals[${i}]`;
    if (!isObject(w)) throw fail(p, 'withdrawal must be an object');
    return {
      index: quantity64(w.index, `${p}.index`, 'index'),
      validatorIndex: quantity64(w.validatorIndex, `${p}.validatorIndex`, 'validatorIndex'),
      address: address(w.address, `${p}.address`),
      amount: quantity64(w.amount, `${p}.amount`, 'amount'),
    };
  });
  return { header: out, withdrawals };
}

export { bool };
