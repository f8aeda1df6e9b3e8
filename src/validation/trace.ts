// Tracer options of debug_trace* (geth's TraceConfig, and TraceCallConfig for
// debug_traceCall), normalised to what the addon takes: the struct logger's flags, `tracer`
// and the known members of `tracerConfig` as given, and `timeout` (a Go duration such as
// "500ms" or "1m30s") parsed into `timeoutMs`. Which tracers exist is the addon's to say.
// Unknown members are ignored, as geth ignores them.

import type { TraceCallParams, TraceConfig } from '../native.js';
import { blockOverrides, stateOverrides } from './call.js';
import { fail, isObject, quantity64, type Path } from './primitives.js';

const LOGGER_FLAGS = ['enableMemory', 'disableMemory', 'disableStack', 'disableStorage', 'enableReturnData', 'disableReturnData', 'debug'] as const;

/** The members of each built-in tracer's tracerConfig (all flags). */
const TRACER_CONFIG: Record<string, readonly string[]> = {
  callTracer: ['onlyTopCall', 'withLog'],
  prestateTracer: ['diffMode', 'disableCode', 'disableStorage'],
};

/** Nanoseconds per unit of a Go duration. */
const UNITS: Record<string, number> = { ns: 1, us: 1e3, µs: 1e3, μs: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };
const DURATION_PART = /([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)/y;

/** A Go duration (time.ParseDuration) in whole milliseconds, rounded up. */
export function goDurationMs(v: unknown, path: Path): number {
  if (typeof v !== 'string') throw fail(path, `timeout must be a duration string such as "5s" or "500ms", got ${JSON.stringify(v)}`);
  const bad = () => fail(path, `invalid timeout ${JSON.stringify(v)}: want a duration such as "5s", "500ms" or "1m30s"`);
  if (v.startsWith('-')) throw fail(path, `timeout must not be negative, got ${JSON.stringify(v)}`);
  const text = v.startsWith('+') ? v.slice(1) : v;
  if (text === '0') return 0;
  if (text === '') throw bad();
  let ns = 0;
  DURATION_PART.lastIndex = 0;
  while (DURATION_PART.lastIndex < text.length) {
    const m = DURATION_PART.exec(text);
    if (m === null || m[1] === '' || m[1] === '.') throw bad();
    ns += Number(m[1]) * UNITS[m[2]!]!;
  }
  return Math.ceil(ns / 1e6);
}

function flag(v: unknown, path: Path, name: string): boolean {
  if (typeof v !== 'boolean') throw fail(path, `${name} must be true or false, got ${JSON.stringify(v)}`);
  return v;
}

/** debug_traceTransaction / debug_traceBlock*'s options (absent: the struct logger). */
export function traceOptions(v: unknown, path: Path): TraceConfig {
  if (v === undefined || v === null) return {};
  if (!isObject(v)) throw fail(path, `tracer options must be an object, got ${JSON.stringify(v)}`);
  const out: TraceConfig = {};
  for (const key of LOGGER_FLAGS) {
    if (v[key] != null) out[key] = flag(v[key], `${path}.${key}`, key);
  }
  if (v.limit != null) {
    if (typeof v.limit !== 'number' || !Number.isSafeInteger(v.limit) || v.limit < 0) {
      throw fail(`${path}.limit`, `limit must be a non-negative integer, got ${JSON.stringify(v.limit)}`);
    }
    out.limit = v.limit;
  }
  if (v.tracer != null) {
    if (typeof v.tracer !== 'string') throw fail(`${path}.tracer`, `tracer must be a string, got ${JSON.stringify(v.tracer)}`);
    out.tracer = v.tracer;
  }
  if (v.tracerConfig != null) out.tracerConfig = tracerConfig(v.tracerConfig, `${path}.tracerConfig`, out.tracer);
  if (v.timeout != null) out.timeoutMs = goDurationMs(v.timeout, `${path}.timeout`);
  return out;
}

function tracerConfig(v: unknown, path: Path, tracer: string | undefined): Record<string, boolean> {
  if (!isObject(v)) throw fail(path, `tracerConfig must be an object, got ${JSON.stringify(v)}`);
  const known = tracer === undefined ? undefined : TRACER_CONFIG[tracer];
  if (known === undefined) return {};
  const out: Record<string, boolean> = {};
  for (const key of known) {
    if (v[key] != null) out[key] = flag(v[key], `${path}.${key}`, key);
  }
  return out;
}

/** The members of debug_traceCall's request that come from its options. */
export type TraceCallExtra = Pick<TraceCallParams, 'stateOverrides' | 'blockOverrides' | 'txIndex'>;

/** debug_traceCall's options: the tracer's, plus overrides and `txIndex`. */
export function traceCallOptions(v: unknown, path: Path): { options: TraceConfig; extra: TraceCallExtra } {
  const options = traceOptions(v, path);
  const extra: TraceCallExtra = {};
  if (isObject(v)) {
    const s = stateOverrides(v.stateOverrides, `${path}.stateOverrides`);
    if (s !== undefined) extra.stateOverrides = s;
    const b = blockOverrides(v.blockOverrides, `${path}.blockOverrides`);
    if (b !== undefined) extra.blockOverrides = b;
    if (v.txIndex != null) extra.txIndex = quantity64(v.txIndex, `${path}.txIndex`, 'txIndex');
  }
  return { options, extra };
}
