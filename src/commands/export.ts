// `preconf-node export [--datadir DIR] [--from A] [--to B] FILE`: writes the blocks of a
// stopped node's datadir as a blocks file (RLP blocks back to back, geth's export format),
// which `preconf-node import` reads back. Exit status: 0 written, 1 failed, 2 bad arguments.

import { resolve } from 'node:path';
import { exportChain } from '../native.js';

export const EXPORT_USAGE = `Usage: preconf-node export [--datadir DIR] [--from A] [--to B] BLOCKS.rlp

Writes blocks A to B of the datadir's chain (default: 1 to the head; block 0 comes from the
genesis file) to BLOCKS.rlp, in the format "geth export" writes and "preconf-node import"
reads. Run it on a stopped node's datadir. A node with --history-blocks exports from the
oldest block it keeps.

  --datadir DIR   the chain to export (default ./data)
  --from A        first block (default 1)
  --to B          last block (default: the head)
  --help          this text
`;

class UsageError extends Error {}

interface ExportArgs {
  datadir: string;
  file: string;
  from?: number;
  to?: number;
}

const blockNumber = (flag: string, v: string | undefined): number => {
  if (v === undefined || !/^\d+$/.test(v) || !Number.isSafeInteger(Number(v))) throw new UsageError(`--${flag} must be a block number, got "${v ?? ''}"`);
  return Number(v);
};

export function parseExportArgs(argv: string[]): ExportArgs | 'help' {
  let datadir = resolve('data');
  let file: string | undefined;
  let from: number | undefined;
  let to: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') return 'help';
    else if (arg === '--datadir') {
      const v = argv[++i];
      if (v === undefined) throw new UsageError('--datadir needs a value');
      datadir = resolve(v);
    } else if (arg === '--from') from = blockNumber('from', argv[++i]);
    else if (arg === '--to') to = blockNumber('to', argv[++i]);
    else if (arg.startsWith('--')) throw new UsageError(`unknown flag ${arg} (see preconf-node export --help)`);
    else if (file === undefined) file = resolve(arg);
    else throw new UsageError(`one blocks file expected, got "${file}" and "${arg}"`);
  }
  if (file === undefined) throw new UsageError('the blocks file to write (BLOCKS.rlp) is required');
  if (from !== undefined && to !== undefined && from > to) throw new UsageError(`--from ${from} is after --to ${to}`);
  return { datadir, file, from, to };
}

export async function exportCommand(argv: string[]): Promise<number> {
  let args: ExportArgs | 'help';
  try {
    args = parseExportArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`preconf-node export: ${e.message}\n\n${EXPORT_USAGE}`);
    return 2;
  }
  if (args === 'help') {
    process.stdout.write(EXPORT_USAGE);
    return 0;
  }
  try {
    const r = await exportChain(args);
    process.stdout.write(`exported blocks ${r.from} to ${r.to} (${r.bytes} bytes) to ${args.file}; last block ${r.lastHash}\n`);
    return 0;
  } catch (e) {
    process.stderr.write(`preconf-node export: ${(e as Error).message}\n`);
    return 1;
  }
}
