// Parsers for the JSON-RPC value types. Each throws -32602 naming the parameter and the
// reason, e.g. `invalid argument 0: hex string of 20 bytes expected for address, got "0x12"`.

import { invalidParams, type RpcError } from '../errors/index.js';

const HEX = /^0x[0-9a-fA-F]*$/;
const QUANTITY = /^0x(0|[1-9a-fA-F][0-9a-fA-F]*)$/;

/** Where a value sits in the request, for error messages: "argument 0" or "argument 0.to". */
export type Path = string;

export const argPath = (index: number): Path => `invalid argument ${index}`;

export function fail(path: Path, reason: string): RpcError {
  return invalidParams(`${path}: ${reason}`);
}

const SHOW_MAX = 80;

/** A short preview of a client value for an error message. Bounded in length and in
 *  depth (it stops once the text is long enough), so any input, however large or deeply
 *  nested, is safe to show: JSON.stringify would overflow the stack on deep nesting. */
export function show(v: unknown): string {
  const out = { text: '' };
  preview(v, out);
  return out.text.length > SHOW_MAX ? `${out.text.slice(0, SHOW_MAX - 3)}...` : out.text;
}

function preview(v: unknown, out: { text: string }): void {
  if (typeof v === 'string') {
    out.text += JSON.stringify(v.length > SHOW_MAX ? v.slice(0, SHOW_MAX) : v);
    return;
  }
  if (typeof v !== 'object' || v === null) {
    out.text += JSON.stringify(v) ?? String(v);
    return;
  }
  const array = Array.isArray(v);
  out.text += array ? '[' : '{';
  let first = true;
  const item = (key: string | undefined, x: unknown): boolean => {
    if (out.text.length > SHOW_MAX) return false;
    if (!first) out.text += ',';
    first = false;
    if (key !== undefined) out.text += `${JSON.stringify(key)}:`;
    preview(x, out);
    return true;
  };
  if (array) {
    for (const x of v) if (!item(undefined, x)) return;
  } else {
    for (const key in v) if (!item(key, (v as Record<string, unknown>)[key])) return;
  }
  out.text += array ? ']' : '}';
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function hexBytes(v: unknown, path: Path, what = 'hex data'): string {
  if (typeof v !== 'string' || !HEX.test(v)) throw fail(path, `${what} must be a 0x-prefixed hex string, got ${show(v)}`);
  if (v.length % 2 !== 0) throw fail(path, `${what} has an odd number of hex digits: ${show(v)}`);
  return v.toLowerCase();
}

/** An account's code (a state override, anvil_setCode). Code that starts with 0xef01 is an
 *  EIP-7702 delegation and must be one: 0xef0100 and a 20-byte address. The EVM cannot hold
 *  anything else under that prefix, so it is refused here rather than failing inside it. */
export function accountCode(v: unknown, path: Path): string {
  const code = hexBytes(v, path, 'code');
  if (code.startsWith('0xef01') && (code.length !== 2 + 23 * 2 || !code.startsWith('0xef0100'))) {
    const bytes = (code.length - 2) / 2;
    throw fail(path, `code starting with 0xef01 must be an EIP-7702 delegation (0xef0100 and a 20-byte address, 23 bytes), got ${bytes} bytes: ${show(code)}`);
  }
  return code;
}

function fixedHex(v: unknown, bytes: number, path: Path, what: string): string {
  if (typeof v !== 'string' || !HEX.test(v) || v.length !== 2 + bytes * 2) {
    throw fail(path, `hex string of ${bytes} bytes expected for ${what}, got ${show(v)}`);
  }
  return v.toLowerCase();
}

export const address = (v: unknown, path: Path): string => fixedHex(v, 20, path, 'address');
export const hash32 = (v: unknown, path: Path, what = 'hash'): string => fixedHex(v, 32, path, what);

/** A hex quantity (no leading zeros, as geth requires) of at most `bits` bits, returned
 *  canonical. Quantities stay strings: a JavaScript number would round above 2^53. */
export function quantity(v: unknown, path: Path, what = 'quantity', bits = 256): string {
  if (typeof v !== 'string') throw fail(path, `${what} must be a hex string, got ${show(v)}`);
  if (!QUANTITY.test(v)) {
    if (v === '0x') throw fail(path, `${what} is empty hex string "0x" (want at least one digit)`);
    if (/^0x0[0-9a-fA-F]+$/.test(v)) throw fail(path, `${what} has leading zero digits: ${show(v)}`);
    throw fail(path, `${what} must be a 0x-prefixed hex number, got ${show(v)}`);
  }
  // No leading zeros: the digit count bounds the value.
  if (v.length - 2 > bits / 4) throw fail(path, `${what} does not fit ${bits} bits: ${show(v)}`);
  return v.toLowerCase();
}

/** Fee fields (gasPrice, maxFeePerGas, ...): u128 in the addon, as in alloy. */
export const quantity128 = (v: unknown, path: Path, what = 'quantity'): string => quantity(v, path, what, 128);
/** gas, nonce, chainId, timestamps, indexes: u64. */
export const quantity64 = (v: unknown, path: Path, what = 'quantity'): string => quantity(v, path, what, 64);
/** A transaction type or a signature parity: one byte. */
export const quantity8 = (v: unknown, path: Path, what = 'quantity'): string => quantity(v, path, what, 8);

/** The value of a canonical quantity, exactly. */
export const toBigInt = (q: string): bigint => BigInt(q);

/** A count or limit that the client may send as a hex quantity or as a plain JSON number
 *  (geth accepts both). A JSON number above 2^53 was already rounded when the body was
 *  parsed, so it is refused rather than used; the hex form carries any 64-bit value. */
export function quantityOrNumber(v: unknown, path: Path, what: string): bigint {
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v) || v < 0) {
      throw fail(path, `${what} must be a non-negative integer below 2^53 when sent as a JSON number (send larger values as a hex quantity), got ${show(v)}`);
    }
    return BigInt(v);
  }
  return toBigInt(quantity64(v, path, what));
}

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
