// `npm run bench`: drives the same JSON-RPC scenarios at this node, at other checkouts of it
// (--baseline) and at anvil (or only at --url) with the Rust load generator, every server
// pinned to one core and the load to the others, and prints Markdown tables.
// See benches/README.md.

import { cpus, loadavg, totalmem } from 'node:os';
import { writeFileSync } from 'node:fs';
import { analyze, watchPending, type CadenceStats } from './cadence.js';
import { deployToken, holders } from './fixtures.js';
import { buildLoadgen, checkLoadgen, pinLoadgen, runLoad } from './loadgen.js';
import { parseOptions, USAGE, type Options } from './options.js';
import { checkPinning, describeAffinity, parseCpuList, pinSelf } from './pinning.js';
import { readScenarios } from './reads.js';
import { render, renderHeader, type Measured, type Meta, type Results } from './report.js';
import { measured, startCalibrationServer, startFloorServer, type Server } from './servers.js';
import { baselines, describe, externalTarget, startTargets, type Baseline } from './targets.js';
import { flood, pacedWithReads } from './txs.js';

const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

/** The command line as typed, for the report (quoted where the shell would need it). */
function commandLine(argv: string[]): string {
  const q = (a: string) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);
  return `npm run bench${argv.length ? ` -- ${argv.map(q).join(' ')}` : ''}`;
}

function meta(o: Options, argv: string[]): Meta {
  return {
    date: new Date().toISOString(),
    command: commandLine(argv),
    cpus: `${cpus().length} × ${cpus()[0]?.model ?? '?'}`,
    memGiB: Math.round(totalmem() / 2 ** 30),
    loadAvgAtStart: loadavg()
      .map((x) => x.toFixed(2))
      .join(' '),
    node: process.version,
    pinning: { serverCore: o.serverCore, loadCores: o.loadCores, driver: describeAffinity(process.pid), calibration: null },
    targets: [],
    options: { ...o, only: [...o.only] },
  };
}

async function run(o: Options, argv: string[], bases: Baseline[]): Promise<Results> {
  const results: Results = { meta: meta(o, argv), targets: [], calibration: [], reads: [], flood: {}, paced: {}, pacedRounds: {}, cadence: {} };
  const base = { connections: o.connections, duration: o.duration, warmup: o.warmup, pipeline: o.pipeline };
  const measure = async (pid: number | null, url: string, bodies: string[]): Promise<Measured> => {
    const load1 = loadavg()[0]!;
    const { result, proc } = await measured(pid, () => runLoad({ ...base, url, bodies }));
    if (result.errors > 0) log(`  ${result.errors} errors, e.g. ${result.error_sample}`);
    return { report: result, proc, load1 };
  };

  if (o.only.has('calibrate')) {
    log('calibration: trivial uWS responder');
    const cal = await startCalibrationServer([o.serverCore]);
    results.meta.pinning.calibration = describeAffinity(cal.pid);
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
    if (o.url) {
      const { server, info } = await externalTarget(o.url, o.pid);
      servers.push(server);
      results.meta.targets.push(info);
    } else {
      const started = await startTargets(o, bases);
      servers.push(...started.servers);
      results.meta.targets.push(...started.infos);
    }
    results.targets = servers.map((s) => s.name);
    log(`targets: ${results.meta.targets.map((t) => `${t.name} ${t.url} (pid ${t.pid ?? '?'}, cores ${t.affinity ?? '?'})`).join(', ')}`);

    const needReads = o.only.has('reads');
    const tokens = needReads ? await Promise.all(servers.map((s) => deployToken(s.url))) : [];
    // The floor answers every read scenario (it reads no chain) beside the others, last.
    const readServers = [...servers];
    if (needReads && o.floor && !o.url) {
      const floor = await startFloorServer([o.serverCore]);
      servers.push(floor);
      readServers.push(floor);
      tokens.push(tokens[0]!);
      results.targets.push(floor.name);
      results.meta.targets.push(describe(floor, null));
    }
    const balanceBodies = holders().map((a, i) => JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: 'eth_getBalance', params: [a, 'latest'] }));

    if (needReads) {
      // An unmeasured pass over every target first: without it the first scenario read
      // up to 20% low for whichever target went first (a same-build A/A run).
      for (const s of readServers) await runLoad({ ...base, duration: 3, url: s.url, bodies: balanceBodies });
      const perServer = tokens.map((token) => readScenarios({ token, holders: holders() }));
      for (let k = 0; k < perServer[0]!.length; k++) {
        const { name, description } = perServer[0]![k]!;
        const row = { name, description, perTarget: {} as Record<string, Measured> };
        // Which target goes first rotates scenario by scenario, so neither always has
        // the other's leftovers (connections closing, caches) to contend with.
        for (let j = 0; j < readServers.length; j++) {
          const i = (j + k) % readServers.length;
          const s = readServers[i]!;
          log(`${name} → ${s.name}`);
          row.perTarget[s.name] = await measure(s.pid, s.url, perServer[i]![k]!.bodies);
        }
        results.reads.push(row);
      }
    }

    // The floor has served its scenarios: the rest is for nodes (and anvil).
    const floorAt = servers.findIndex((s) => s.kind === 'floor');
    if (floorAt >= 0) await servers.splice(floorAt, 1)[0]!.stop();

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
      // Paced first: a flood can leave anvil's automine stuck (see txs.ts). With several
      // rounds the targets alternate order, so the machine's drift over minutes does not
      // favour whichever goes first.
      for (let round = 0; round < o.rounds; round++) {
        for (const s of round % 2 === 0 ? servers : [...servers].reverse()) {
          log(`transfers at ${o.txRate} tx/s + eth_getBalance load → ${s.name}${o.rounds > 1 ? ` (round ${round + 1} of ${o.rounds})` : ''}`);
          let cadence: CadenceStats | null = null;
          const alongside =
            withCadence && s.preconf && round === 0 ? async () => void (cadence = analyze(await watchPending(s.url, o.longS, o.watchMs), o.longS)) : undefined;
          const paced = await pacedWithReads(s, { ...base, duration: o.longS, rate: o.txRate, pollMs: o.pollMs, readBodies: balanceBodies, alongside });
          (results.pacedRounds[s.name] ??= []).push(paced);
          results.paced[s.name] ??= paced;
          if (cadence) results.cadence[s.name]![`eth_getBalance load + ${o.txRate} tx/s`] = cadence;
        }
      }
      for (const s of servers) {
        log(`tx flood → ${s.name}`);
        results.flood[s.name] = await flood(s, o.txCount, o.pollMs, base);
      }
    }
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
  results.meta.loadAvgAtEnd = loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  return results;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const o = parseOptions(argv);
  if (!o) {
    process.stdout.write(USAGE);
    return;
  }
  checkPinning({ serverCore: o.serverCore, loadCores: o.loadCores });
  const bases = baselines(o.baselines);
  if (o.build) buildLoadgen(); // before pinning: the build may use every core
  checkLoadgen();
  // From here on this driver and every load generator run stay off the server core.
  pinSelf(o.loadCores);
  pinLoadgen(o.loadCores);
  const load1 = loadavg()[0]!;
  if (load1 > 0.5) log(`warning: load average is ${load1.toFixed(2)} on ${cpus().length} cores; results will be noisy`);
  const results = await run(o, argv, bases);
  if (o.url) {
    const a = results.meta.targets[0]?.affinity;
    if (!a) log("warning: --url without --pid: the server's cores are unknown (this run does not pin it)");
    else if (
      a
        .split(' | ')
        .flatMap(parseCpuList)
        .some((c) => o.loadCores.includes(c))
    )
      log(`warning: the server at --url may run on the load cores (${a})`);
  }
  process.stdout.write(renderHeader(results.meta, o) + render(results) + '\n');
  if (o.out) writeFileSync(o.out, JSON.stringify(results, null, 2));
}

main().catch((e: unknown) => {
  console.error(e instanceof Error && ['PinningError', 'BaselineError', 'LoadgenError'].includes(e.name) ? `[bench] ${e.message}` : e);
  process.exit(1);
});
