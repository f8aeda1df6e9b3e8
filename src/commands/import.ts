// `preconf-node import`: executes a chain built elsewhere (concatenated RLP blocks, as
// `geth export` writes them) into a datadir, checking every block, then exits.
// Exit status: 0 when every block was imported, 1 when a block (or the store) failed,
// 2 for bad arguments.

import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { importChain, type ImportFailure, type ImportOptions, type ImportProgressInfo, type ImportResult } from '../native.js';

export const IMPORT_USAGE = `Usage: preconf-node import --genesis FILE [--rollup-config FILE] [--datadir DIR] [--safe N] [--finalized N] BLOCKS.rlp
       preconf-node import --optimism [--datadir DIR] BLOCKS.rlp

Executes the blocks of BLOCKS.rlp (RLP blocks back to back, as "geth export" writes them) with the
fork rules of the genesis, checks every header field a full node checks, and stores them. An
import that stopped resumes after the stored head. Then serve the chain with
"preconf-node --genesis FILE --datadir DIR --no-build". On an OP Stack genesis the blocks run on
the OP EVM (deposits, L1 data fee, each OP fork's header fields).

  --genesis FILE      the chain's geth-style genesis.json (op-geth's, with config.optimism, for an OP chain)
  --rollup-config FILE
                      chain config for a --genesis whose config is null (OP chains from the superchain
                      registry): op-node's rollup.json or the registry's chain TOML
  --optimism          the embedded OP dev chain (as "preconf-node --optimism"), instead of --genesis
  --datadir DIR       where the chain is stored (default ./data)
  --safe N            the "safe" block afterwards (default: the last block)
  --finalized N       the "finalized" block afterwards (default: the last block, or --safe)
  --db-cache-mb MB    page cache of the store
  --quiet             no progress lines
  --help              this text
`;

export class ImportUsageError extends Error {}

export interface ImportArgs {
  options: ImportOptions;
  quiet: boolean;
}

const blockNumber = (flag: string, v: string): number => {
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v))) throw new ImportUsageError(`--${flag} must be a block number, got "${v}"`);
  return Number(v);
};

/** Parses the arguments after `import`. */
export function parseImportArgs(argv: string[]): ImportArgs | 'help' {
  let genesis: string | undefined;
  let rollupConfig: string | undefined;
  let optimism = false;
  let datadir = resolve('data');
  let blocks: string | undefined;
  const options: Partial<ImportOptions> = {};
  let quiet = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new ImportUsageError(`${arg} needs a value`);
      return v;
    };
    if (arg === '--help' || arg === '-h') return 'help';
    else if (arg === '--genesis') genesis = value();
    else if (arg === '--rollup-config') rollupConfig = value();
    else if (arg === '--optimism') optimism = true;
    else if (arg === '--datadir') datadir = resolve(value());
    else if (arg === '--safe') options.safe = blockNumber('safe', value());
    else if (arg === '--finalized') options.finalized = blockNumber('finalized', value());
    else if (arg === '--db-cache-mb') {
      const v = value();
      if (!/^\d+$/.test(v) || Number(v) < 8) throw new ImportUsageError(`--db-cache-mb must be an integer >= 8, got "${v}"`);
      options.dbCacheMb = Number(v);
    } else if (arg === '--quiet') quiet = true;
    else if (arg.startsWith('--')) throw new ImportUsageError(`unknown flag ${arg} (see preconf-node import --help)`);
    else if (blocks === undefined) blocks = arg;
    else throw new ImportUsageError(`one blocks file expected, got "${blocks}" and "${arg}"`);
  }
  if (optimism && (genesis !== undefined || rollupConfig !== undefined)) {
    throw new ImportUsageError('--optimism excludes --genesis and --rollup-config: it is the embedded OP dev chain');
  }
  if (genesis === undefined && !optimism) throw new ImportUsageError('--genesis FILE is required (or --optimism, the OP dev chain)');
  if (rollupConfig !== undefined && genesis === undefined) throw new ImportUsageError('--rollup-config needs --genesis');
  if (blocks === undefined) throw new ImportUsageError('the blocks file (BLOCKS.rlp) is required');
  for (const [what, file] of [
    ['genesis', genesis],
    ['chain config', rollupConfig],
    ['blocks file', blocks],
  ] as const) {
    if (file !== undefined && !existsSync(file)) throw new ImportUsageError(`cannot read the ${what} ${file}: no such file`);
  }
  const chain = optimism
    ? { optimism: true }
    : { genesisFile: resolve(genesis!), ...(rollupConfig !== undefined ? { rollupConfig: resolve(rollupConfig) } : {}) };
  return { options: { ...options, ...chain, datadir, blocksFile: resolve(blocks) }, quiet };
}

const rate = (p: ImportProgressInfo): string => `${p.blocksPerSecond.toFixed(1)} blocks/s`;

export function progressLine(p: ImportProgressInfo): string {
  const skipped = p.skipped > 0 ? `, ${p.skipped} already stored` : '';
  return `import: block ${p.head}, ${p.imported} imported (${p.transactions} transactions${skipped}), ${rate(p)}, ${(p.elapsedMs / 1000).toFixed(1)} s`;
}

const isFailure = (r: ImportResult | ImportFailure): r is ImportFailure => 'message' in r;

/** Runs the import; returns the process exit status. */
export async function runImport(argv: string[]): Promise<number> {
  let args: ImportArgs | 'help';
  try {
    args = parseImportArgs(argv);
  } catch (e) {
    if (!(e instanceof ImportUsageError)) throw e;
    process.stderr.write(`preconf-node import: ${e.message}\n\n${IMPORT_USAGE}`);
    return 2;
  }
  if (args === 'help') {
    process.stdout.write(IMPORT_USAGE);
    return 0;
  }
  const { options, quiet } = args;
  process.stderr.write(`import: ${options.blocksFile} into ${options.datadir}\n`);
  const result = await importChain(options, quiet ? undefined : (p) => void process.stderr.write(`${progressLine(p)}\n`));
  if (isFailure(result)) {
    process.stderr.write(`preconf-node import: ${result.message}\n`);
    return 1;
  }
  const p = result.progress;
  process.stdout.write(
    `imported ${p.imported} blocks (${p.transactions} transactions${p.skipped > 0 ? `; ${p.skipped} were already stored` : ''}) in ${(p.elapsedMs / 1000).toFixed(1)} s, ${rate(p)}\n` +
      `head ${p.head} ${result.headHash}, safe ${result.safe}, finalized ${result.finalized}, genesis ${result.genesisHash}\n`,
  );
  return 0;
}
