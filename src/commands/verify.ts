// `preconf-node verify [--datadir DIR]`: recomputes the head's state root from the stored
// values and compares it with the head header and the persisted trie. Exit 0 when all
// three agree. Run it on a stopped node's datadir (after a crash, or before a backup).

import { resolve } from 'node:path';
import { verifyStore } from '../native.js';

export async function verifyCommand(argv: string[]): Promise<number> {
  let datadir = resolve('data');
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--datadir' && argv[i + 1] !== undefined) datadir = resolve(argv[++i]!);
    else if (a.startsWith('--datadir=')) datadir = resolve(a.slice('--datadir='.length));
    else throw new Error(`verify: unexpected argument "${a}" (usage: preconf-node verify [--datadir DIR])`);
  }
  const r = await verifyStore(datadir);
  process.stdout.write(
    `head block ${r.head}: ${r.accounts} accounts, ${r.slots} storage slots\n` +
      `  header state root     ${r.headerRoot}\n` +
      `  recomputed from state ${r.recomputedRoot}\n` +
      `  persisted trie root   ${r.trieRoot}\n` +
      (r.ok ? 'state root matches\n' : 'STATE ROOT MISMATCH\n'),
  );
  return r.ok ? 0 : 1;
}
