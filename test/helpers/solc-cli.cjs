#!/usr/bin/env node
// The part of solc's command line that forge uses (`--version`, and `--standard-json` with
// the input on stdin), on top of solc-js: the npm `solc` package, the same compiler built
// to WebAssembly. forge only runs a native solc binary and cannot download one offline, so
// the tool tests point it here with `--use <this file>`.

'use strict';

const { readFileSync } = require('node:fs');
const { isAbsolute, join } = require('node:path');
const solc = require('solc');

const args = process.argv.slice(2);

if (args.includes('--version')) {
  // forge reads the version from the last line, as the native binary prints it.
  process.stdout.write(`solc, the solidity compiler commandline interface\nVersion: ${solc.version()}\n`);
  process.exit(0);
}

if (!args.includes('--standard-json')) {
  process.stderr.write(`solc-cli: only --version and --standard-json are supported (got ${args.join(' ')})\n`);
  process.exit(2);
}

// Imports forge did not inline are read from the base and include paths.
const roots = [];
for (let i = 0; i < args.length; i++) {
  if ((args[i] === '--base-path' || args[i] === '--include-path') && args[i + 1]) roots.push(args[++i]);
}
function findImports(path) {
  for (const root of isAbsolute(path) ? [''] : roots.length > 0 ? roots : [process.cwd()]) {
    try {
      return { contents: readFileSync(join(root, path), 'utf8') };
    } catch {
      // try the next root
    }
  }
  return { error: `file not found: ${path}` };
}

const chunks = [];
process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', () => {
  const output = solc.compile(Buffer.concat(chunks).toString('utf8'), { import: findImports });
  process.stdout.write(output);
});
