// Turns replay results into the runner's report: pass/fail per method, the total, the diffs
// of the failures, the documented exceptions on their own, and the floor's verdict.

import { formatVerdict, head } from './format.js';
import type { FixtureResult } from './replay.js';

export interface MethodCount {
  passed: number;
  failed: number;
  excepted: number;
  files: number;
}

export interface Summary {
  passed: number;
  failed: number;
  /** Documented exceptions that failed (not counted as failures). */
  excepted: number;
  files: number;
  perMethod: Map<string, MethodCount>;
  failures: FixtureResult[];
  exceptions: { result: FixtureResult; reason: string }[];
  /** Documented exceptions that pass now: their entry should go. */
  exceptionsPassing: string[];
}

export function summarize(results: FixtureResult[], exceptions: Map<string, string>): Summary {
  const s: Summary = { passed: 0, failed: 0, excepted: 0, files: results.length, perMethod: new Map(), failures: [], exceptions: [], exceptionsPassing: [] };
  for (const r of results) {
    const m = s.perMethod.get(r.fixture.method) ?? { passed: 0, failed: 0, excepted: 0, files: 0 };
    s.perMethod.set(r.fixture.method, m);
    m.files++;
    const reason = exceptions.get(r.fixture.name);
    if (r.pass) {
      s.passed++;
      m.passed++;
      if (reason !== undefined) s.exceptionsPassing.push(r.fixture.name);
    } else if (reason !== undefined) {
      s.excepted++;
      m.excepted++;
      s.exceptions.push({ result: r, reason });
    } else {
      s.failed++;
      m.failed++;
      s.failures.push(r);
    }
  }
  return s;
}

/** The diff of one failed fixture, one group of lines per difference (all; callers cut). */
export function failureLines(r: FixtureResult): string[][] {
  const groups: string[][] = [];
  if (r.problem !== undefined) groups.push([r.problem]);
  if (r.verdict !== undefined) {
    if (r.verdict.mode === 'shape') groups.push(['(speconly: result checked for shape only)']);
    groups.push(...formatVerdict(r.verdict));
  }
  return groups;
}

function failureTitle(r: FixtureResult): string {
  const n = r.fixture.exchanges.length;
  const ex = r.failedAt === undefined ? undefined : r.fixture.exchanges[r.failedAt];
  const where = ex === undefined ? '' : ` (request ${r.failedAt! + 1} of ${n}, line ${ex.requestLine})`;
  return `${r.fixture.name}${where}`;
}

export interface RenderOptions {
  /** Show every diff line; otherwise the first `diffLines` of each failure. */
  verbose: boolean;
  diffLines: number;
}

export function renderReport(s: Summary, o: RenderOptions): string[] {
  const out: string[] = [];
  const cut = (groups: string[][]): string[] => (o.verbose ? groups.flat() : head(groups, o.diffLines));
  if (s.failures.length > 0) {
    out.push('', `Failures (${s.failures.length}):`);
    for (const r of s.failures) out.push(`FAIL ${failureTitle(r)}`, ...cut(failureLines(r)).map((l) => `  ${l}`));
  }
  if (s.exceptions.length > 0 || s.exceptionsPassing.length > 0) {
    out.push('', 'Documented exceptions (not failures):');
    for (const { result, reason } of s.exceptions) {
      out.push(`EXCEPTION ${failureTitle(result)}: ${reason}`);
      if (o.verbose)
        out.push(
          ...failureLines(result)
            .flat()
            .map((l) => `  ${l}`),
        );
    }
    for (const name of s.exceptionsPassing) out.push(`PASSES NOW ${name}: remove it from test/compat/exceptions.json`);
  }
  const width = Math.max(6, ...[...s.perMethod.keys()].map((k) => k.length));
  const row = (name: string, c: MethodCount): string =>
    `${name.padEnd(width)}  ${String(c.passed).padStart(4)}  ${String(c.failed).padStart(4)}  ${String(c.excepted).padStart(4)}  ${String(c.files).padStart(5)}`;
  out.push('', `${'method'.padEnd(width)}  pass  fail  exc.  files`);
  for (const [m, c] of [...s.perMethod.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) out.push(row(m, c));
  out.push(row('total', { passed: s.passed, failed: s.failed, excepted: s.excepted, files: s.files }));
  return out;
}

export interface FloorVerdict {
  ok: boolean;
  message: string;
}

/** The floor applies to full runs only; a subset (--only) cannot be held to it. */
export function checkFloor(passed: number, floor: number, subset: boolean): FloorVerdict {
  if (subset) return { ok: true, message: `subset run: the floor (${floor}) is not checked` };
  if (passed < floor) return { ok: false, message: `FAILED: ${passed} files pass, below the floor of ${floor} (test/compat/floor.json)` };
  if (passed > floor)
    return {
      ok: true,
      message: `${passed} files pass, above the floor of ${floor}: raise "minPassing" in test/compat/floor.json to ${passed} (or run with --raise-floor)`,
    };
  return { ok: true, message: `${passed} files pass, at the floor of ${floor}` };
}

/** Machine-readable report (--report FILE). */
export function jsonReport(s: Summary, floor: number, subset: boolean): unknown {
  return {
    passed: s.passed,
    failed: s.failed,
    excepted: s.excepted,
    files: s.files,
    floor,
    subset,
    perMethod: Object.fromEntries(s.perMethod),
    failures: s.failures.map((r) => ({ file: r.fixture.name, request: (r.failedAt ?? 0) + 1, diff: failureLines(r).flat() })),
    exceptions: s.exceptions.map(({ result, reason }) => ({ file: result.fixture.name, reason })),
    exceptionsPassing: s.exceptionsPassing,
  };
}
