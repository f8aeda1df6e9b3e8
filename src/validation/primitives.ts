// Parsers for the JSON-RPC value types. Each throws -32602 naming the parameter and the
// reason, e.g. `invalid argument 0: hex string of 20 bytes expected for address, got "0x12"`.

import { invalidParams, RpcError } from '../errors/index.js';

const HEX = /^0x[0-9a-fA-F]*$/;
const QUANTITY = /^0x(0|[1-9a-fA-F][0-9a-fA-F]*)$/;

/** Where a value sits in the request, for error messages: "argument 0" or "argument 0.to". */
export type Path = string;

export const argPath = (index: number): Path => `invalid argument ${index}`;

export function fail(path: Path, reason: string): RpcError {
  return invalidParams(`${path}: ${reason}`);
}

function show(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function hexBytes(v: unknown, path: Path, what = 'hex data'): string {
  if (typeof v !== 'string' || !HEX.test(v)) throw fail(path, `${what} must be a 0x-prefixed hex string, got ${show(v)}`);
  if (v.length % 2 !== 0) throw fail(path, `${what} has an odd number of hex digits: ${show(v)}`);
  return v.toLowerCase();
}

function fixedHex(v: unknown, bytes: number, path: Path, what: string): string {
  if (typeof v !== 'string' || !HEX.test(v) || v.length !== 2 + bytes * 2) {
    throw fail(path, `hex string of ${bytes} bytes expected for ${what}, got ${show(v)}`);
  }
  return v.toLowerCase();
}

export const address = (v: unknown, path: Path): string => fixedHex(v, 20, path, 'address');
export const hash32 = (v: unknown, path: Path, what = 'hash'): string => fixedHex(v, 32, path, what);

/** A hex quantity (no leading zeros, as geth requires); returned canonical. */
export function quantity(v: unknown, path: Path, what = 'quantity'): string {
  if (typeof v !== 'string') throw fail(path, `${what} must be a hex string, got ${show(v)}`);
  if (!QUANTITY.test(v)) {
    if (v === '0x') throw fail(path, `${what} is empty hex string "0x" (want at least one digit)`);
    if (/^0x0[0-9a-fA-F]+$/.test(v)) throw fail(path, `${what} has leading zero digits: ${show(v)}`);
    throw fail(path, `${what} must be a 0x-prefixed hex number, got ${show(v)}`);
  }
  if (v.length > 66) throw fail(path, `${what} is larger than 256 bits: ${show(v)}`);
  return v.toLowerCase();
}

/** A quantity that must fit 64 bits. */
export function quantity64(v: unknown, path: Path, what = 'quantity'): string {
  const q = quantity(v, path, what);
  if (q.length > 18) throw fail(path, `${what} does not fit 64 bits: ${show(v)}`);
  return q;
}

export const toNumber = (q: string): number => Number.parseInt(q, 16);

export function bool(v: unknown, path: Path, what = 'flag'): boolean {
  if (typeof v !== 'boolean') throw fail(path, `${what} must be true or false, got ${show(v)}`);
  return v;
}

/** A storage slot: a hex quantity or up to 32 bytes of hex, as geth accepts it. */
export function storageSlot(v: unknown, path: Path): string {
  if (typeof v !== 'string' || !HEX.test(v) || v === '0x') {
    throw fail(path, `invalid hex in storage key: ${show(v)}`);
  }
  const digits = v.slice(2).replace(/^0+/, '');
  if (v.length > 66) throw fail(path, `storage key too long (want at most 32 bytes): ${show(v)}`);
  return `0x${digits.padStart(64, '0').toLowerCase()}`;
}

export function expectKeys(obj: Record<string, unknown>, allowed: ReadonlySet<string>, path: Path, what: string): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.has(key)) throw fail(path, `unknown field ${show(key)} in ${what}`);
  }
}
