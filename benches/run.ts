// `npm run bench`: drives the same JSON-RPC scenarios at this node and at anvil (or only at
// --url) with the Rust load generator, and prints Markdown tables. See benches/README.md.

import { execFileSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { analyze, watchPending, type CadenceStats } from './cadence.js';
import { deployToken, holders } from './fixtures.js';
import { buildLoadgen, runLoad } from './loadgen.js';
import { parseOptions, USAGE, type Options } from './options.js';
import { readScenarios } from './reads.js';
import { render, type Measured, type Results } from './report.js';
import { measured, startAnvil, startCalibrationServer, startPreconfNode, type Server } from './servers.js';
import { flood, pacedWithReads } from './txs.js';
import { ROOT, rpc } from './util.js';
import { anvilBinary } from '../test/helpers/anvil.js';

const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

function sh(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '?';
  }
}

/** When the node's built files were last written: the bench runs dist/ and native/, not the sources. */
function builtAt(dir: string, suffix: string): string {
  try {
    const times = readdirSync(join(ROOT, dir)).filter((f) => f.endsWith(suffix)).map((f) => statSync(join(ROOT, dir, f)).mtimeMs);
    return new Date(Math.max(...times)).toISOString();
  } catch {
    return '?';
  }
}

function meta(o: Options): Record<string, unknown> {
  return {
    addonBuilt: builtAt('native', '.node'),
    distBuilt: builtAt('dist', '.js'),
    date: new Date().toISOString(),
    cpus: `${cpus().length} × ${cpus()[0]?.model ?? '?'}`,
    memGiB: Math.round(totalmem() / 2 ** 30),
    loadAvgAtStart: loadavg().map((x) => x.toFixed(2)).join(' '),
    node: process.version,
    anvil: o.url ? null : sh(anvilBinary(), ['--version']).split('\n')[0],
    commit: sh('git', ['rev-parse', '--short', 'HEAD']),
    dirty: sh('git', ['status', '--porcelain', '--', 'src', 'crates/chain', 'crates/napi']) !== '',
    options: { ...o, only: [...o.only] },
  };
}

async function loadTarget(o: Options): Promise<Server> {
  const url = o.url!;
  const pending = await rpc<Record<string, unknown> | null>(url, 'eth_getBlockByNumber', ['pending', false]).catch(() => null);
  return { name: 'target', url, pid: o.pid, preconf: pending !== null && 'preconfIndex' in pending, stop: async () => {} };
}

async function run(o: Options): Promise<Results> {
  const results: Results = { meta: meta(o), targets: [], calibration: [], reads: [], flood: {}, paced: {}, cadence: {} };
  const base = { connections: o.connections, duration: o.duration, warmup: o.warmup, pipeline: o.pipeline };
  const measure = async (pid: number | null, url: string, bodies: string[]): Promise<Measured> => {
    const load1 = loadavg()[0]!;
    const { result, proc } = await measured(pid, () => runLoad({ ...base, url, bodies }));
    if (result.errors > 0) log(`  ${result.errors} errors, e.g. ${result.error_sample}`);
    return { report: result, proc, load1 };
  };

  if (o.only.has('calibrate')) {
    log('calibration: trivial uWS responder');
    const cal = await startCalibrationServer();
    const body = [JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] })];
    try {
      const label = `trivial uWS responder${o.pipeline > 1 ? `, pipeline ${o.pipeline}` : ''}`;
      results.calibration.push({ label, m: await measure(cal.pid, cal.url, body) });
      if (o.pipeline < 8) {
        const m = await measured(cal.pid, () => runLoad({ ...base, pipeline: 8, url: cal.url, bodies: body }));
        results.calibration.push({ label: 'same, pipeline 8 (generator headroom)', m: { report: m.result, proc: m.proc, load1: loadavg()[0]! } });
      }
    } finally {
      await cal.stop();
    }
  }

  const servers: Server[] = [];
  try {
    if (o.url) servers.push(await loadTarget(o));
    else servers.push(await startPreconfNode(o.nodeArgs), await startAnvil());
    results.targets = servers.map((s) => s.name);
    log(`targets: ${servers.map((s) => `${s.name} ${s.url} (pid ${s.pid ?? '?'})`).join(', ')}`);

    const needReads = o.only.has('reads');
    const tokens = needReads ? await Promise.all(servers.map((s) => deployToken(s.url))) : [];
    const balanceBodies = holders().map((a, i) => JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: 'eth_getBalance', params: [a, 'latest'] }));

    if (needReads) {
      const perServer = tokens.map((token) => readScenarios({ token, holders: holders() }));
      for (let k = 0; k < perServer[0]!.length; k++) {
        const { name, description } = perServer[0]![k]!;
        const row = { name, description, perTarget: {} as Record<string, Measured> };
        for (const [i, s] of servers.entries()) {
          log(`${name} → ${s.name}`);
          row.perTarget[s.name] = await measure(s.pid, s.url, perServer[i]![k]!.bodies);
        }
        results.reads.push(row);
      }
    }

    const withCadence = o.only.has('cadence');
    if (withCadence) {
      for (const s of servers.filter((x) => x.preconf)) {
        log(`cadence → ${s.name}: idle, then under eth_getBalance load`);
        const idle = analyze(await watchPending(s.url, o.longS, o.watchMs), o.longS);
        const [w] = await Promise.all([
          new Promise((r) => setTimeout(r, o.warmup * 1000)).then(() => watchPending(s.url, o.longS, o.watchMs)),
          runLoad({ ...base, duration: o.longS, url: s.url, bodies: balanceBodies }),
        ]);
        results.cadence[s.name] = { idle, 'eth_getBalance load': analyze(w, o.longS) };
      }
    }

    if (o.only.has('tx')) {
      // Paced first: a flood can leave anvil's automine stuck (see txs.ts).
      for (const s of servers) {
        log(`transfers at ${o.txRate} tx/s + eth_getBalance load → ${s.name}`);
        let cadence: CadenceStats | null = null;
        const alongside =
          withCadence && s.preconf
            ? async () => void (cadence = analyze(await watchPending(s.url, o.longS, o.watchMs), o.longS))
            : undefined;
        results.paced[s.name] = await pacedWithReads(s, { ...base, duration: o.longS, rate: o.txRate, pollMs: o.pollMs, readBodies: balanceBodies, alongside });
        if (cadence) results.cadence[s.name]![`eth_getBalance load + ${o.txRate} tx/s`] = cadence;
      }
      for (const s of servers) {
        log(`tx flood → ${s.name}`);
        results.flood[s.name] = await flood(s, o.txCount, o.pollMs, base);
      }
    }
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
  results.meta.loadAvgAtEnd = loadavg().map((x) => x.toFixed(2)).join(' ');
  return results;
}

async function main(): Promise<void> {
  const o = parseOptions(process.argv.slice(2));
  if (!o) {
    process.stdout.write(USAGE);
    return;
  }
  if (o.build) buildLoadgen();
  const load1 = loadavg()[0]!;
  if (load1 > 0.5) log(`warning: load average is ${load1.toFixed(2)} on ${cpus().length} cores; results will be noisy`);
  const results = await run(o);
  const m = results.meta;
  process.stdout.write(
    `## Benchmark ${m.date}\n\n` +
      `Machine: ${m.cpus}, ${m.memGiB} GiB; load average ${m.loadAvgAtStart} at start, ${m.loadAvgAtEnd} at end. ` +
      `Node ${m.node}${m.anvil ? `, ${m.anvil}` : ''}; commit ${m.commit}${m.dirty ? ' (node sources modified)' : ''}, ` +
      `addon built ${m.addonBuilt}, dist built ${m.distBuilt}. ` +
      `${o.connections} connections, pipeline ${o.pipeline}, ${o.warmup} s warm-up + ${o.duration} s measured per scenario per target.\n\n` +
      render(results) +
      '\n',
  );
  if (o.out) writeFileSync(o.out, JSON.stringify(results, null, 2));
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
