// Tallies of a blockchain-test run: per fork (the fixture's `network`), per category (the
// fixture's folder), the skip reasons, and the failures with their first line.

import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestCase } from './fixtures.js';
import type { Outcome, Status } from './run.js';

export interface Result {
  test: TestCase;
  outcome: Outcome;
}

export type Tally = Record<Status, number>;

export interface Summary {
  total: Tally;
  byFork: Map<string, Tally>;
  byCategory: Map<string, Tally>;
  skipReasons: Map<string, number>;
  failures: Result[];
}

const empty = (): Tally => ({ pass: 0, fail: 0, skip: 0 });

export function summarize(results: Result[]): Summary {
  const s: Summary = { total: empty(), byFork: new Map(), byCategory: new Map(), skipReasons: new Map(), failures: [] };
  const add = (map: Map<string, Tally>, key: string, status: Status): void => {
    const t = map.get(key) ?? empty();
    t[status]++;
    map.set(key, t);
  };
  for (const r of results) {
    const status = r.outcome.status;
    s.total[status]++;
    add(s.byFork, r.test.test.network, status);
    add(s.byCategory, r.test.category, status);
    if (status === 'skip') s.skipReasons.set(r.outcome.reason ?? '', (s.skipReasons.get(r.outcome.reason ?? '') ?? 0) + 1);
    if (status === 'fail') s.failures.push(r);
  }
  return s;
}

function table(title: string, rows: Map<string, Tally>): string {
  const keys = [...rows.keys()].sort();
  const width = Math.max(title.length, ...keys.map((k) => k.length));
  const line = (k: string, t: Tally): string =>
    `${k.padEnd(width)}  ${String(t.pass).padStart(5)}  ${String(t.fail).padStart(5)}  ${String(t.skip).padStart(5)}`;
  return [`${title.padEnd(width)}   pass   fail   skip`, ...keys.map((k) => line(k, rows.get(k)!))].join('\n');
}

/** The report printed at the end of a run. */
export function renderReport(s: Summary, opts: { verbose?: boolean; maxFailures?: number } = {}): string {
  const out: string[] = [];
  if (s.failures.length > 0) {
    out.push(`failures (${s.failures.length}):`);
    const shown = opts.verbose ? s.failures : s.failures.slice(0, opts.maxFailures ?? 30);
    for (const f of shown) out.push(`  FAIL ${f.test.name}\n       ${f.test.file}\n       ${f.outcome.reason}`);
    if (shown.length < s.failures.length) out.push(`  … ${s.failures.length - shown.length} more (--verbose lists all)`);
    out.push('');
  }
  out.push(table('fork', s.byFork), '', table('category', s.byCategory), '');
  if (s.skipReasons.size > 0) {
    out.push('skipped:');
    for (const [reason, n] of [...s.skipReasons].sort((a, b) => b[1] - a[1])) out.push(`  ${String(n).padStart(5)}  ${reason}`);
    out.push('');
  }
  out.push(`${s.total.pass} passed, ${s.total.fail} failed, ${s.total.skip} skipped`);
  return out.join('\n');
}

export function jsonReport(s: Summary): object {
  return {
    total: s.total,
    byFork: Object.fromEntries(s.byFork),
    byCategory: Object.fromEntries(s.byCategory),
    skipped: Object.fromEntries(s.skipReasons),
    failures: s.failures.map((f) => ({ file: f.test.file, name: f.test.name, reason: f.outcome.reason })),
  };
}

const here = dirname(fileURLToPath(import.meta.url));
/** The regression set kept in the repository, and the floor its passing count is held to. */
export const REGRESSION_DIR = join(here, '..', 'fixtures', 'blockchain');
export const FLOOR_FILE = join(here, 'floor.json');

export function loadFloor(): number {
  return (JSON.parse(readFileSync(FLOOR_FILE, 'utf8')) as { minPassing: number }).minPassing;
}

export function writeFloor(minPassing: number): void {
  writeFileSync(FLOOR_FILE, `${JSON.stringify({ minPassing }, null, 2)}\n`);
}
