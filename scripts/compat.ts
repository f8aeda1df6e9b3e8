// `npm run compat`: the execution-apis rpc-compat suite against this node: the recorded
// answers of geth that hive replays against every client. Imports the kit's chain, serves it
// with `--no-build --profile geth`, replays every fixture in hive's order with hive's
// comparison rules, and holds the result to the floor.
//
// Exit status: 0 at or above the floor, 1 below it (or the node died mid-run), 2 when the run
// could not happen (kit, settings, build, import or start failed).

import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ConfigError, loadExceptions, loadFloor, raiseFloor } from '../test/compat/config.js';
import { FixtureError, kitDir, loadFixtures } from '../test/compat/fixtures.js';
import { chainHead, checkBuilt, importChain, NodeError, servedHead, startNode, type ChainHead, type RunningNode } from '../test/compat/node.js';
import { replayAll } from '../test/compat/replay.js';
import { checkFloor, jsonReport, renderReport, summarize } from '../test/compat/report.js';

interface Options {
  datadir?: string;
  url?: string;
  only: string[];
  verbose: boolean;
  report?: string;
  raiseFloor: boolean;
}

const USAGE = `Usage: npm run compat -- [flags]

  --datadir DIR    keep the imported chain in DIR; a DIR that holds it already is not imported again
                   (each run serves a fresh copy of DIR, so nothing the suite sends carries over)
  --url URL        replay against a node that is already running (no import, no start)
  --only TEXT      only fixtures whose path (e.g. eth_call/call-revert.io) contains TEXT; repeatable
  --verbose        every line of every diff, and one line per file while replaying
  --report FILE    also write the results as JSON
  --raise-floor    write the number of passing files to test/compat/floor.json when it is higher
  --help           this text

The kit is test/fixtures/rpc-compat in the repository, or $RPC_COMPAT_DIR.
`;

class UsageError extends Error {}

function parseOptions(argv: string[]): Options | 'help' {
  const o: Options = { only: [], verbose: false, raiseFloor: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new UsageError(`${arg} needs a value`);
      return v;
    };
    if (arg === '--help' || arg === '-h') return 'help';
    else if (arg === '--datadir') o.datadir = resolve(value());
    else if (arg === '--url') o.url = value();
    else if (arg === '--only') o.only.push(value());
    else if (arg === '--verbose') o.verbose = true;
    else if (arg === '--report') o.report = resolve(value());
    else if (arg === '--raise-floor') o.raiseFloor = true;
    else throw new UsageError(`unknown argument ${arg} (see --help)`);
  }
  if (o.url !== undefined && o.datadir !== undefined) throw new UsageError('--url and --datadir exclude each other');
  return o;
}

const log = (line = ''): void => void process.stdout.write(`${line}\n`);
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** True when `datadir` already serves the kit's head (the node is started and stopped to ask). */
async function holdsChain(genesis: string, datadir: string, head: ChainHead): Promise<boolean> {
  if (!existsSync(datadir) || readdirSync(datadir).length === 0) return false;
  let node: RunningNode;
  try {
    node = await startNode({ genesis, datadir });
  } catch (e) {
    if (e instanceof NodeError) return false; // e.g. an import that stopped half-way: resume it
    throw e;
  }
  try {
    return (await servedHead(node.url))?.hash === head.hash;
  } finally {
    await node.stop();
  }
}

/**
 * Imports the chain into `datadir` unless it holds it already, then starts the node on
 * `serveDir` (a fresh copy of `datadir` when they differ) and checks the head it serves.
 */
async function prepareNode(kit: string, datadir: string, serveDir: string, verbose: boolean): Promise<RunningNode> {
  const genesis = join(kit, 'chain', 'genesis.json');
  const blocks = join(kit, 'chain', 'chain.rlp');
  const head = chainHead(blocks);
  if (await holdsChain(genesis, datadir, head)) log(`chain already imported in ${datadir} (head ${head.number}, ${head.hash})`);
  else {
    const t0 = performance.now();
    log(`importing ${head.blocks} blocks into ${datadir}`);
    mkdirSync(datadir, { recursive: true });
    await importChain({ genesis, datadir, blocks, ...(verbose ? { onOutput: (s: string) => void process.stderr.write(s) } : {}) });
    log(`import done in ${seconds(performance.now() - t0)}`);
  }
  // The suite's eth_sendRawTransaction files leave transactions in the pool, which the node
  // journals in its datadir; a kept datadir is therefore served from a copy, so every run
  // starts from the imported chain alone, as hive's does.
  if (serveDir !== datadir) cpSync(datadir, serveDir, { recursive: true });
  const node = await startNode({ genesis, datadir: serveDir });
  const served = await servedHead(node.url);
  if (served?.hash !== head.hash) {
    await node.stop();
    throw new NodeError(
      'import-failed',
      `after the import the node serves head ${served ? `${served.number} ${served.hash}` : '(none)'}, expected ${head.number} ${head.hash}`,
      node.output(),
    );
  }
  return node;
}

async function main(argv: string[]): Promise<number> {
  const o = parseOptions(argv);
  if (o === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  const kit = kitDir();
  const all = loadFixtures(kit);
  const exceptions = loadExceptions(all.map((f) => f.name));
  const floor = loadFloor();
  const subset = o.only.length > 0;
  const fixtures = subset ? all.filter((f) => o.only.some((t) => f.name.includes(t))) : all;
  if (fixtures.length === 0) throw new UsageError(`no fixture matches --only ${o.only.join(', ')}`);
  log(`rpc-compat kit ${kit}: ${fixtures.length} of ${all.length} files`);

  let node: RunningNode | null = null;
  let tmp: string | null = null;
  const cleanup = async (): Promise<void> => {
    await node?.stop();
    if (tmp !== null) rmSync(tmp, { recursive: true, force: true });
  };
  const onSignal = (): void => void cleanup().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    let url = o.url;
    if (url === undefined) {
      checkBuilt();
      tmp = mkdtempSync(join(tmpdir(), 'preconf-compat-'));
      const serveDir = join(tmp, 'chain');
      node = await prepareNode(kit, o.datadir ?? serveDir, serveDir, o.verbose);
      url = node.url;
    }
    log(`replaying against ${url}`);
    const t0 = performance.now();
    const results = await replayAll(url, fixtures, (r) => {
      if (o.verbose) log(`${r.pass ? 'pass' : 'FAIL'} ${r.fixture.name} (${Math.round(r.ms)} ms)`);
    });
    const died = node?.exitStatus() ?? null;
    const summary = summarize(results, exceptions);
    for (const line of renderReport(summary, { verbose: o.verbose, diffLines: 8 })) log(line);
    log(`replayed ${results.length} files in ${seconds(performance.now() - t0)}`);
    if (o.report !== undefined) writeFileSync(o.report, `${JSON.stringify(jsonReport(summary, floor, subset), null, 2)}\n`);
    if (died !== null) {
      log(`FAILED: the node exited (${died}) during the run; its last output:\n${node!.output().slice(-4000)}`);
      return 1;
    }
    const verdict = checkFloor(summary.passed, floor, subset);
    log(verdict.message);
    if (o.raiseFloor && !subset && verdict.ok) log(`floor is now ${raiseFloor(summary.passed)}`);
    return verdict.ok ? 0 : 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await cleanup();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    if (e instanceof UsageError) process.stderr.write(`compat: ${e.message}\n\n${USAGE}`);
    else if (e instanceof FixtureError || e instanceof ConfigError) process.stderr.write(`compat: ${e.message}\n`);
    else if (e instanceof NodeError) process.stderr.write(`compat: ${e.message}${e.output ? `\n--- node output ---\n${e.output}` : ''}\n`);
    else process.stderr.write(`compat: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(2);
  },
);
