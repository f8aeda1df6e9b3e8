// Fails when two top-level modules of a crate depend on each other, directly or through
// others: the arrows inside crates/chain must point one way (lib.rs lists the order).
// A module's dependencies are the `crate::<module>` paths in its files, tests included.
//
//   node scripts/module-cycles.mjs [crates/chain/src …]

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : name.endsWith('.rs') ? [path] : [];
  });
}

/** module -> the modules it uses. */
export function moduleGraph(src) {
  const all = files(src);
  const moduleOf = (path) => relative(src, path).split(sep)[0].replace(/\.rs$/, '');
  const modules = new Set(all.map(moduleOf).filter((m) => m !== 'lib' && m !== 'main'));
  const graph = new Map([...modules].map((m) => [m, new Set()]));
  for (const path of all) {
    const from = moduleOf(path);
    if (!graph.has(from)) continue;
    for (const [, to] of readFileSync(path, 'utf8').matchAll(/crate::([a-z_][a-z0-9_]*)/g)) {
      if (to !== from && graph.has(to)) graph.get(from).add(to);
    }
  }
  return graph;
}

/** Every cycle, as a path [a, b, …, a] (one per strongly connected group). */
export function cycles(graph) {
  const found = [];
  const state = new Map();
  const stack = [];
  const visit = (m) => {
    state.set(m, 'open');
    stack.push(m);
    for (const to of graph.get(m)) {
      if (state.get(to) === 'open') found.push([...stack.slice(stack.indexOf(to)), to]);
      else if (!state.has(to)) visit(to);
    }
    stack.pop();
    state.set(m, 'done');
  };
  for (const m of [...graph.keys()].sort()) if (!state.has(m)) visit(m);
  return found;
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split(sep).pop())) {
  const roots = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['crates/chain/src'];
  let failed = false;
  for (const root of roots) {
    for (const c of cycles(moduleGraph(root))) {
      console.error(`${root}: module cycle ${c.join(' -> ')}`);
      failed = true;
    }
  }
  if (failed) process.exit(1);
  console.log(`no module cycles in ${roots.join(', ')}`);
}
