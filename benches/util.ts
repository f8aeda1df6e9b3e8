// Small shared helpers: paths, clocks, JSON-RPC over HTTP, percentiles.

import http from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Wall-clock time in microseconds, comparable with loadgen's unix timestamps. */
export const nowUs = (): number => (performance.timeOrigin + performance.now()) * 1000;

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// node:http with a keep-alive agent: about a quarter of fetch's CPU per request, which
// matters when this process polls while sharing two cores with the server under test.
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

export function rpcRaw(url: string, body: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    const req = http.request(url, { method: 'POST', agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`HTTP ${res.statusCode}: ${text}`));
        try {
          resolve(JSON.parse(text));
        } catch (e) {
          reject(e as Error);
        }
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
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
