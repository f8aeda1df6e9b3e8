// Fails when sibling modules depend on each other, directly or through others, at any level:
// the top-level modules of a crate (or folders of src/), and the files and folders inside
// each of them. A module's dependencies are the paths it names (`crate::…`, `super::…`,
// `self::…` in Rust, relative imports in TypeScript), tests included; a module using its
// own parent (a Rust `mod.rs`, a TypeScript folder's `index.ts`) is not a sibling's arrow.
//
//   node scripts/module-cycles.mjs [crates/chain/src src …]   (no argument: every crate and src/)

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

function files(dir, ext) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path, ext) : name.endsWith(ext) ? [path] : [];
  });
}

/** Rust text without comments and string contents (doc links and messages name no module). */
function code(text) {
  let out = '';
  for (let i = 0; i < text.length; ) {
    const c = text[i];
    const rest = text.slice(i, i + 3);
    if (rest.startsWith('//')) {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end;
    } else if (rest.startsWith('/*')) {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
    } else if (/^r#*"/.test(text.slice(i, i + 8)) && !/\w/.test(text[i - 1] ?? '')) {
      const hashes = text.slice(i + 1).match(/^#*/)[0];
      const end = text.indexOf(`"${hashes}`, i + 2 + hashes.length);
      out += '""';
      i = end < 0 ? text.length : end + 1 + hashes.length;
    } else if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += '""';
      i = j + 1;
    } else if (c === "'" && (text[i + 2] === "'" || text[i + 1] === '\\')) {
      const end = text.indexOf("'", i + 2);
      out += "' '";
      i = end < 0 ? text.length : end + 1;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** `use a::{b, c::{d, e}}` -> ['a::b', 'a::c::d', 'a::c::e']. */
function expandUse(tree) {
  tree = tree.replace(/\s+/g, '');
  const open = tree.indexOf('{');
  if (open < 0) return [tree];
  const prefix = tree.slice(0, open);
  const inner = tree.slice(open + 1, tree.lastIndexOf('}'));
  const parts = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < inner.length; i++) {
    if (inner[i] === '{') depth++;
    else if (inner[i] === '}') depth--;
    else if (inner[i] === ',' && depth === 0) {
      parts.push(inner.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(inner.slice(start));
  return parts.filter((p) => p !== '').flatMap((p) => expandUse(prefix + p));
}

/** Rust: file -> its module path, from the folder layout and `#[path]` attributes. */
function rustModules(src) {
  const all = files(src, '.rs');
  const modulePath = new Map();
  for (const path of all) {
    const parts = relative(src, path).split(sep);
    const last = parts.pop().replace(/\.rs$/, '');
    if (last !== 'mod' && !(parts.length === 0 && (last === 'lib' || last === 'main'))) parts.push(last);
    modulePath.set(path, parts);
  }
  for (const path of all) {
    for (const [, file, name] of readFileSync(path, 'utf8').matchAll(/#\[path\s*=\s*"([^"]+)"\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)/g)) {
      const target = resolve(dirname(path), file);
      if (modulePath.has(target)) modulePath.set(target, [...modulePath.get(path), name]);
    }
  }
  return modulePath;
}

/** Rust: every module, and [from module path, to module path] for every path a file names. */
function rustEdges(src) {
  const modules = rustModules(src);
  const edges = [];
  for (const [path, self] of modules) {
    const text = code(readFileSync(path, 'utf8'));
    const named = [...text.matchAll(/\buse\s+([^;]+);/g)].flatMap(([, tree]) => expandUse(tree));
    named.push(...[...text.matchAll(/\b(?:crate|super|self)(?:::[A-Za-z_]\w*)+/g)].map(([p]) => p));
    for (const p of named) {
      const segments = p.split('::');
      let target;
      if (segments[0] === 'crate') target = segments.slice(1);
      else if (segments[0] === 'self') target = [...self, ...segments.slice(1)];
      else if (segments[0] === 'super') {
        let base = [...self];
        let i = 0;
        while (segments[i] === 'super') {
          base = base.slice(0, -1);
          i++;
        }
        target = [...base, ...segments.slice(i)];
      } else continue;
      edges.push([self, target]);
    }
  }
  return { modules: [...modules.values()], edges };
}

/** TypeScript: a file's module path (a folder's index.ts is the folder). */
function tsPath(src, path) {
  const parts = relative(src, path).replace(/\.ts$/, '').split(sep);
  if (parts.at(-1) === 'index') parts.pop();
  return parts;
}

function tsEdges(src) {
  const edges = [];
  const all = files(src, '.ts');
  for (const path of all) {
    const text = readFileSync(path, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/^\s*\/\/.*$/gm, '');
    for (const [, spec] of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm)) {
      let target = resolve(dirname(path), spec.replace(/\.js$/, '.ts'));
      if (!target.endsWith('.ts')) target = existsSync(`${target}.ts`) ? `${target}.ts` : join(target, 'index.ts');
      if (!target.startsWith(resolve(src) + sep) || !existsSync(target)) continue;
      edges.push([tsPath(src, path), tsPath(src, target)]);
    }
  }
  return { modules: all.map((path) => tsPath(src, path)), edges };
}

/** folder (module path joined by '/') -> sibling -> the siblings it uses. */
export function moduleGraphs(src) {
  const rust = existsSync(join(src, 'lib.rs')) || existsSync(join(src, 'main.rs'));
  const { modules, edges } = rust ? rustEdges(src) : tsEdges(src);
  const graphs = new Map();
  const node = (folder, name) => {
    if (!graphs.has(folder)) graphs.set(folder, new Map());
    const g = graphs.get(folder);
    if (!g.has(name)) g.set(name, new Set());
    return g.get(name);
  };
  // A path names a module up to its last module segment; what follows is an item in it.
  const known = new Set(modules.flatMap((m) => m.map((_, i) => m.slice(0, i + 1).join('/'))));
  for (const [from, to] of edges) {
    let k = 0;
    while (k < from.length && k < to.length && from[k] === to[k]) k++;
    // A parent using its child, or a child its parent's items: not between siblings.
    if (k >= from.length || k >= to.length) continue;
    // Only a path that reaches a module of this crate (items beyond it are cut off).
    if (!known.has(to.slice(0, k + 1).join('/'))) continue;
    node(from.slice(0, k).join('/'), to[k]);
    node(from.slice(0, k).join('/'), from[k]).add(to[k]);
  }
  return graphs;
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

/** Every crate's src/ and the TypeScript src/. */
function defaultRoots() {
  const crates = readdirSync('crates')
    .map((c) => join('crates', c, 'src'))
    .filter((p) => existsSync(p));
  return [...crates, 'src'];
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split(sep).pop())) {
  const roots = process.argv.slice(2).length > 0 ? process.argv.slice(2) : defaultRoots();
  let failed = false;
  for (const root of roots) {
    for (const [folder, graph] of moduleGraphs(root)) {
      for (const c of cycles(graph)) {
        console.error(`${join(root, folder)}: module cycle ${c.join(' -> ')}`);
        failed = true;
      }
    }
  }
  if (failed) process.exit(1);
  console.log(`no module cycles in ${roots.join(', ')}`);
}
