// Parameters of the test methods (anvil_*, evm_*, hardhat_*). Numbers are taken as anvil
// takes them: a hex string (leading zeros allowed: Hardhat scripts pad them) or a JSON
// integer, and handed to the addon as a canonical 0x quantity.

import { argPath, fail, hexBytes, isObject, show, type Path } from './primitives.js';

const HEX_NUMBER = /^0x[0-9a-fA-F]+$/;

/** A hex string or a JSON integer of at most `bits` bits, as a canonical 0x quantity. */
export function devNumber(v: unknown, path: Path, what: string, bits = 64): string {
  let n: bigint;
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v) || v < 0)
      throw fail(path, `${what} must be a non-negative integer (below 2^53 as a JSON number; larger as hex), got ${show(v)}`);
    n = BigInt(v);
  } else if (typeof v === 'string' && HEX_NUMBER.test(v)) {
    n = BigInt(v);
  } else {
    throw fail(path, `${what} must be a 0x-prefixed hex number or a JSON integer, got ${show(v)}`);
  }
  if (n >> BigInt(bits) !== 0n) throw fail(path, `${what} does not fit ${bits} bits: ${show(v)}`);
  return `0x${n.toString(16)}`;
}

/** An optional number: absent or null is `undefined`. */
export const optionalDevNumber = (v: unknown, path: Path, what: string, bits = 64): string | undefined =>
  v === undefined || v === null ? undefined : devNumber(v, path, what, bits);

/** A storage value: up to 32 bytes of hex, left-padded to 32 (anvil wants exactly 32). */
export function storageValue(v: unknown, path: Path): string {
  const hex = hexBytes(v, path, 'storage value');
  if (hex.length > 66) throw fail(path, `storage value longer than 32 bytes: ${show(v)}`);
  return `0x${hex.slice(2).padStart(64, '0')}`;
}

/** evm_mine's one parameter: a timestamp, or `{timestamp?, blocks?}` (anvil's MineOptions). */
export function mineOptions(v: unknown): { blocks: string; timestamp?: string } {
  const path = argPath(0);
  if (v === undefined || v === null) return { blocks: '0x1' };
  if (!isObject(v)) return { blocks: '0x1', timestamp: devNumber(v, path, 'timestamp') };
  for (const key of Object.keys(v)) {
    if (key !== 'timestamp' && key !== 'blocks') throw fail(path, `unknown field ${show(key)} in mine options`);
  }
  return {
    blocks: optionalDevNumber(v.blocks, `${path}.blocks`, 'blocks') ?? '0x1',
    timestamp: optionalDevNumber(v.timestamp, `${path}.timestamp`, 'timestamp'),
  };
}

/** anvil_reset's `forking` parameters, when the request names another upstream or block. */
export interface ForkReset {
  url?: string;
  /** A canonical 0x quantity. */
  block?: string;
}

/**
 * What anvil_reset's parameter asks for: `undefined` to start again (a fork: at its fork
 * block), or another fork (`forking.jsonRpcUrl`, `forking.blockNumber`: either may be absent,
 * null or, as viem sends it, NaN turned null).
 */
export function forkReset(v: unknown): ForkReset | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw fail(argPath(0), `reset options must be an object, got ${show(v)}`);
  const forking = v.forking;
  if (forking === undefined || forking === null) return undefined;
  const path = `${argPath(0)}.forking`;
  if (!isObject(forking)) throw fail(path, `must be an object, got ${show(forking)}`);
  const { jsonRpcUrl, blockNumber } = forking;
  const url = jsonRpcUrl === undefined || jsonRpcUrl === null || jsonRpcUrl === '' ? undefined : jsonRpcUrl;
  if (url !== undefined && typeof url !== 'string') throw fail(`${path}.jsonRpcUrl`, `must be a URL string, got ${show(url)}`);
  const block = optionalDevNumber(blockNumber, `${path}.blockNumber`, 'block number');
  return url === undefined && block === undefined ? undefined : { url, block };
}
