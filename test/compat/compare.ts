// hive's rpc-compat comparison rules (as the kit's README states them):
// - structural JSON equality: key order is irrelevant, numbers compare by value, a missing or
//   an extra key is a difference, `jsonrpc` and `id` included;
// - wherever both sides have an `error` object with a `message` at the same place, the
//   message is dropped from both (top level and nested, e.g. per-call errors of eth_simulateV1);
// - a `speconly` fixture answered with a result is checked for shape only; answered with an
//   error, it is compared normally.

import { isObject, JsonNumber, typeName, type Json, type JsonObject } from './json.js';
import { checkShape } from './shapes.js';

export type DifferenceKind = 'changed' | 'type' | 'missing' | 'extra' | 'shape';

export interface Difference {
  /** JSON path into the response: `$.result.transactions[0].hash`. */
  path: string;
  kind: DifferenceKind;
  expected?: Json;
  actual?: Json;
  /** What a shape check found wrong. */
  note?: string;
}

export interface Verdict {
  pass: boolean;
  /** `shape`: a speconly fixture answered with a result. */
  mode: 'exact' | 'shape';
  /** The first differences found (at most the limit passed in). */
  differences: Difference[];
  /** All differences, including the ones left out of `differences`. */
  total: number;
  /** Error messages dropped from both sides before comparing. */
  redacted: number;
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

export function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return IDENT.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

function clone(v: Json): Json {
  if (Array.isArray(v)) return v.map(clone);
  if (isObject(v)) {
    const out = Object.create(null) as JsonObject;
    for (const k of Object.keys(v)) out[k] = clone(v[k]!);
    return out;
  }
  return v; // primitives and JsonNumber are immutable
}

/**
 * Returns copies of both trees with the error messages dropped wherever both sides have an
 * `error` object with a `message` at the same place, and how many pairs were dropped.
 */
export function redactErrorMessages(expected: Json, actual: Json): { expected: Json; actual: Json; count: number } {
  const e = clone(expected);
  const a = clone(actual);
  let count = 0;
  const walk = (x: Json, y: Json): void => {
    if (Array.isArray(x) && Array.isArray(y)) {
      for (let i = 0; i < Math.min(x.length, y.length); i++) walk(x[i]!, y[i]!);
      return;
    }
    if (!isObject(x) || !isObject(y)) return;
    const ex = x.error;
    const ey = y.error;
    if (isObject(ex) && isObject(ey) && 'message' in ex && 'message' in ey) {
      delete ex.message;
      delete ey.message;
      count++;
    }
    for (const k of Object.keys(x)) if (k in y) walk(x[k]!, y[k]!);
  };
  walk(e, a);
  return { expected: e, actual: a, count };
}

/** Structural differences between two JSON trees; collects at most `limit`, counts all. */
export function diffJson(expected: Json, actual: Json, limit = 100): { differences: Difference[]; total: number } {
  const differences: Difference[] = [];
  let total = 0;
  const add = (d: Difference): void => {
    total++;
    if (differences.length < limit) differences.push(d);
  };
  const walk = (x: Json, y: Json, path: string): void => {
    if (x instanceof JsonNumber || y instanceof JsonNumber) {
      if (!(x instanceof JsonNumber && y instanceof JsonNumber)) add({ path, kind: 'type', expected: x, actual: y });
      else if (x.value !== y.value) add({ path, kind: 'changed', expected: x, actual: y });
      return;
    }
    if (Array.isArray(x) && Array.isArray(y)) {
      const n = Math.max(x.length, y.length);
      for (let i = 0; i < n; i++) {
        if (i >= y.length) add({ path: childPath(path, i), kind: 'missing', expected: x[i]! });
        else if (i >= x.length) add({ path: childPath(path, i), kind: 'extra', actual: y[i]! });
        else walk(x[i]!, y[i]!, childPath(path, i));
      }
      return;
    }
    if (isObject(x) && isObject(y)) {
      for (const k of Object.keys(x)) {
        if (!(k in y)) add({ path: childPath(path, k), kind: 'missing', expected: x[k]! });
        else walk(x[k]!, y[k]!, childPath(path, k));
      }
      for (const k of Object.keys(y)) if (!(k in x)) add({ path: childPath(path, k), kind: 'extra', actual: y[k]! });
      return;
    }
    if (typeName(x) !== typeName(y)) add({ path, kind: 'type', expected: x, actual: y });
    else if (x !== y) add({ path, kind: 'changed', expected: x, actual: y });
  };
  walk(expected, actual, '$');
  return { differences, total };
}

export interface CompareInput {
  method: string;
  speconly: boolean;
  expected: Json;
  actual: Json;
  /** Most differences to keep (all are counted). */
  limit?: number;
}

const ENVELOPE = ['jsonrpc', 'id', 'result'];

/** Applies hive's rules to one recorded response and the node's answer. */
export function compareResponse({ method, speconly, expected, actual, limit = 100 }: CompareInput): Verdict {
  if (speconly && isObject(actual) && 'result' in actual && !('error' in actual)) {
    // Shape only: the recorded result is just an example. The envelope still has to be a
    // proper answer to this request (same `jsonrpc` and `id`, nothing else beside `result`).
    const differences: Difference[] = [];
    let total = 0;
    const add = (d: Difference): void => {
      total++;
      if (differences.length < limit) differences.push(d);
    };
    const exp = isObject(expected) ? expected : {};
    for (const key of ['jsonrpc', 'id']) {
      if (!(key in actual)) add({ path: childPath('$', key), kind: 'missing', expected: exp[key] ?? null });
      else if (key in exp)
        for (const d of diffJson(exp[key]!, actual[key]!, limit).differences) add({ ...d, path: d.path.replace(/^\$/, childPath('$', key)) });
    }
    for (const key of Object.keys(actual)) if (!ENVELOPE.includes(key)) add({ path: childPath('$', key), kind: 'extra', actual: actual[key]! });
    for (const p of checkShape(method, actual.result!, '$.result'))
      add({ path: p.path, kind: 'shape', note: p.problem, ...(p.actual === undefined ? {} : { actual: p.actual }) });
    return { pass: total === 0, mode: 'shape', differences, total, redacted: 0 };
  }
  const r = redactErrorMessages(expected, actual);
  const d = diffJson(r.expected, r.actual, limit);
  return { pass: d.total === 0, mode: 'exact', differences: d.differences, total: d.total, redacted: r.count };
}
