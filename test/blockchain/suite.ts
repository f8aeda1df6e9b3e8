// Runs the tests of fixture files, a few at a time (each import runs on a thread of its
// own), each in a fresh datadir under `workDir`.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixtureFiles, loadTests, type TestCase } from './fixtures.js';
import type { Result } from './report.js';
import { runTest } from './run.js';

export interface SuiteOptions {
  /** Tests run at once. */
  jobs?: number;
  /** Only tests whose file path or name contains one of these texts. */
  only?: string[];
  /** Called after each test. */
  onResult?: (r: Result, done: number) => void;
}

/** The tests of the files (or directories) in `paths`, filtered by `only`. A file that is
 *  not JSON (a truncated download, a Git LFS pointer) is reported through `onUnreadable`. */
export function collectTests(paths: string[], only: string[] = [], onUnreadable?: (file: string, e: Error) => void): TestCase[] {
  const tests: TestCase[] = [];
  for (const file of fixtureFiles(paths)) {
    let loaded: TestCase[];
    try {
      loaded = loadTests(file);
    } catch (e) {
      if (!onUnreadable) throw e;
      onUnreadable(file, e as Error);
      continue;
    }
    for (const tc of loaded) {
      if (only.length === 0 || only.some((o) => tc.file.includes(o) || tc.name.includes(o))) tests.push(tc);
    }
  }
  return tests;
}

export async function runSuite(tests: TestCase[], opts: SuiteOptions = {}): Promise<Result[]> {
  const workDir = mkdtempSync(join(tmpdir(), 'blockchain-tests-'));
  const results: Result[] = new Array(tests.length);
  let next = 0;
  let done = 0;
  const worker = async (): Promise<void> => {
    while (next < tests.length) {
      const i = next++;
      const test = tests[i]!;
      let outcome;
      try {
        outcome = await runTest(test, join(workDir, String(i)));
      } catch (e) {
        outcome = { status: 'fail' as const, reason: `runner error: ${e instanceof Error ? e.message : String(e)}`, refusals: [] };
      }
      results[i] = { test, outcome };
      opts.onResult?.(results[i]!, ++done);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, opts.jobs ?? 1) }, worker));
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
  return results;
}
