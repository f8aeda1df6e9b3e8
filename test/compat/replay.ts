// Replays fixtures against one running endpoint, in order, as hive does: each `>>` body is
// POSTed as written with a client timeout, the answer is compared with the `<<` line, and
// a file stops at its first mismatch.

import { compareResponse, type Verdict } from './compare.js';
import type { Fixture } from './fixtures.js';
import { JsonSyntaxError, parseJson } from './json.js';

// hive allows 5 s; more here because the first blob transaction waits for the KZG settings,
// which the node loads in the background at start (seconds on a loaded 2-core machine).
export const REQUEST_TIMEOUT_MS = 30_000;

export interface FixtureResult {
  fixture: Fixture;
  pass: boolean;
  /** Index of the exchange that failed (when !pass). */
  failedAt?: number;
  /** The comparison of the failing (or last) exchange, when an answer was compared. */
  verdict?: Verdict;
  /** Why no answer could be compared: transport error, timeout, non-JSON body. */
  problem?: string;
  ms: number;
}

interface Answer {
  status: number;
  text: string;
}

async function post(url: string, body: string, timeoutMs: number): Promise<Answer> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: AbortSignal.timeout(timeoutMs) });
  return { status: res.status, text: await res.text() };
}

function describeFetchError(e: unknown, timeoutMs: number): string {
  const err = e as Error & { cause?: { code?: string; message?: string } };
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return `no answer within ${timeoutMs / 1000} s`;
  const cause = err.cause?.code ?? err.cause?.message;
  return `request failed: ${err.message}${cause ? ` (${cause})` : ''}`;
}

/** Replays one fixture; never throws for what the node does. */
export async function replayFixture(url: string, fixture: Fixture, timeoutMs = REQUEST_TIMEOUT_MS): Promise<FixtureResult> {
  const t0 = performance.now();
  const done = (r: Omit<FixtureResult, 'fixture' | 'ms'>): FixtureResult => ({ fixture, ms: performance.now() - t0, ...r });
  let verdict: Verdict | undefined;
  for (let i = 0; i < fixture.exchanges.length; i++) {
    const ex = fixture.exchanges[i]!;
    let answer: Answer;
    try {
      answer = await post(url, ex.request, timeoutMs);
    } catch (e) {
      return done({ pass: false, failedAt: i, problem: describeFetchError(e, timeoutMs) });
    }
    let actual;
    try {
      actual = parseJson(answer.text);
    } catch (e) {
      if (!(e instanceof JsonSyntaxError)) throw e;
      const body = answer.text.length > 200 ? `${answer.text.slice(0, 200)}…` : answer.text;
      return done({ pass: false, failedAt: i, problem: `HTTP ${answer.status}, body is not JSON (${e.message}): ${JSON.stringify(body)}` });
    }
    verdict = compareResponse({ method: fixture.method, speconly: fixture.speconly, expected: ex.expected, actual });
    if (!verdict.pass) return done({ pass: false, failedAt: i, verdict, ...(answer.status === 200 ? {} : { problem: `HTTP ${answer.status}` }) });
  }
  return done({ pass: true, ...(verdict ? { verdict } : {}) });
}

/** Replays fixtures one after another against the same endpoint. */
export async function replayAll(
  url: string,
  fixtures: Fixture[],
  onResult?: (r: FixtureResult) => void,
  timeoutMs = REQUEST_TIMEOUT_MS,
): Promise<FixtureResult[]> {
  const out: FixtureResult[] = [];
  for (const f of fixtures) {
    const r = await replayFixture(url, f, timeoutMs);
    out.push(r);
    onResult?.(r);
  }
  return out;
}
