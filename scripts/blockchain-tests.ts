// `npm run blockchain-tests [DIR|FILE…]`: runs Ethereum blockchain-test fixtures (both the
// execution-spec-tests and the legacy format) through the import path and prints pass/fail
// per fork and category. Without paths it runs the regression set in test/fixtures/blockchain
// and holds it to test/blockchain/floor.json (docs/compat.md). Exit status: 0 when nothing
// failed (and, for the regression set, the floor is met), 1 otherwise, 2 for bad arguments.

import { writeFileSync } from 'node:fs';
import { jsonReport, loadFloor, REGRESSION_DIR, renderReport, summarize, writeFloor } from '../test/blockchain/report.js';
import { collectTests, runSuite } from '../test/blockchain/suite.js';

const USAGE = `Usage: npm run blockchain-tests -- [options] [DIR|FILE…]

  --jobs N          tests run at once (default 1)
  --only TEXT       tests whose file or name contains TEXT (repeatable)
  --verbose         every failure, and a line per test while running
  --report FILE     the summary as JSON as well
  --raise-floor     write the regression set's passing count to test/blockchain/floor.json
`;

async function main(argv: string[]): Promise<number> {
  const paths: string[] = [];
  const only: string[] = [];
  let jobs = 1;
  let verbose = false;
  let report: string | undefined;
  let raise = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--help' || a === '-h') {
      process.stdout.write(USAGE);
      return 0;
    } else if (a === '--jobs') jobs = Number(value());
    else if (a === '--only') only.push(value());
    else if (a === '--verbose') verbose = true;
    else if (a === '--report') report = value();
    else if (a === '--raise-floor') raise = true;
    else if (a.startsWith('--')) throw new Error(`unknown flag ${a}`);
    else paths.push(a);
  }
  if (!Number.isInteger(jobs) || jobs < 1) throw new Error('--jobs must be a positive integer');
  const regression = paths.length === 0;
  let unreadable = 0;
  const tests = collectTests(regression ? [REGRESSION_DIR] : paths, only, (file, e) => {
    unreadable++;
    process.stderr.write(`blockchain-tests: cannot read ${file}: ${e.message}\n`);
  });
  process.stderr.write(`blockchain-tests: ${tests.length} tests\n`);
  const started = performance.now();
  const results = await runSuite(tests, {
    jobs,
    onResult: (r, done) => {
      if (verbose) {
        const refused = r.outcome.refusals.map((m) => `\n     refused as expected: ${m}`).join('');
        process.stderr.write(`${r.outcome.status.toUpperCase().padEnd(4)} ${r.test.name}${r.outcome.reason ? `: ${r.outcome.reason}` : ''}${refused}\n`);
      } else if (done % 200 === 0) process.stderr.write(`  ${done}/${tests.length}\n`);
    },
  });
  const summary = summarize(results);
  process.stdout.write(`${renderReport(summary, { verbose })}\n`);
  process.stdout.write(`in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  if (report) writeFileSync(report, `${JSON.stringify(jsonReport(summary), null, 2)}\n`);
  if (unreadable > 0) process.stdout.write(`${unreadable} fixture files could not be read (listed above)\n`);
  let ok = summary.total.fail === 0 && unreadable === 0;
  if (regression && only.length === 0) {
    const floor = loadFloor();
    if (raise && summary.total.pass > floor) writeFloor(summary.total.pass);
    if (summary.total.pass < floor) {
      process.stdout.write(`below the floor: ${summary.total.pass} passed, test/blockchain/floor.json requires ${floor}\n`);
      ok = false;
    } else if (summary.total.pass > floor && !raise) {
      process.stdout.write(`above the floor (${floor}): raise it to ${summary.total.pass} with --raise-floor\n`);
    }
  }
  return ok ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`blockchain-tests: ${e instanceof Error ? e.message : String(e)}\n\n${USAGE}`);
    process.exit(2);
  },
);
