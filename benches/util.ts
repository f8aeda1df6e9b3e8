// Small shared helpers: paths, clocks, JSON-RPC over fetch, percentiles.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Wall-clock time in microseconds, comparable with loadgen's unix timestamps. */
export const nowUs = (): number => (performance.timeOrigin + performance.now()) * 1000;

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function rpcRaw(url: string, body: string): Promise<unknown> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  return res.json();
}

/** One JSON-RPC call; throws on a JSON-RPC error. */
export async function rpc<T = unknown>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const r = (await rpcRaw(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }))) as {
    result?: T;
    error?: { message: string };
  };
  if (r.error) throw new Error(`${method}: ${r.error.message}`);
  return r.result as T;
}

/** Nearest-rank percentile of unsorted numbers (NaN when empty). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(Math.max(rank, 1), sorted.length) - 1]!;
}
