// Fails when code names a directory outside the repository as test data (a `shared` folder
// beside the checkout, or any absolute path through one): a clone must pass its own tests with
// nothing beside it, so the data a test needs is committed under test/fixtures with its source
// and license named.
// Usage: node scripts/no-outside-data.mjs [DIR…]  (default: the folders that hold code)

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const roots = process.argv.length > 2 ? process.argv.slice(2) : ['src', 'test', 'scripts', 'benches', 'crates', 'bin'];
// Data folders may quote their upstream's paths; only code is checked.
const skipDirs = new Set(['node_modules', 'target', 'dist', 'fixtures']);
const codeFile = /\.(?:[cm]?[jt]s|rs|toml|json|sh)$/;
// Built from parts so that this file does not match itself.
const outside = new RegExp(['\\.\\./', 'shared', '|/', 'shared', '/'].join(''));

const hits = [];
const visit = (path) => {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return;
  if (st.isDirectory()) {
    for (const name of readdirSync(path)) if (!skipDirs.has(name)) visit(join(path, name));
    return;
  }
  if (!codeFile.test(path)) return;
  const lines = readFileSync(path, 'utf8').split('\n');
  lines.forEach((line, i) => {
    if (outside.test(line)) hits.push(`${path}:${i + 1}: ${line.trim()}`);
  });
};
for (const root of [...roots, 'package.json', 'vitest.config.ts']) visit(root);

if (hits.length > 0) {
  console.error('code names a directory outside the repository (copy the data into test/fixtures):');
  for (const h of hits) console.error(`  ${h}`);
  process.exit(1);
}
console.log('no test, script or crate reads data from outside the repository');
