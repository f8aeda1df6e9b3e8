// Readable diffs: one entry per difference, named by its JSON path, values cut to a length a
// terminal can show (a simulated block or a blob transaction is many kilobytes).

import { stringify, type Json } from './json.js';
import type { Difference, Verdict } from './compare.js';

/** Compact JSON, cut in the middle when longer than `max` characters. */
export function preview(v: Json | undefined, max = 120): string {
  if (v === undefined) return '(absent)';
  const s = stringify(v);
  if (s.length <= max) return s;
  const keep = Math.max(8, max - 24);
  return `${s.slice(0, Math.ceil(keep / 2))}…${s.slice(s.length - Math.floor(keep / 2))} (${s.length} chars)`;
}

export function formatDifference(d: Difference, max = 120): string[] {
  switch (d.kind) {
    case 'missing':
      return [`${d.path}: missing (expected ${preview(d.expected, max)})`];
    case 'extra':
      return [`${d.path}: unexpected (actual ${preview(d.actual, max)})`];
    case 'shape':
      return [`${d.path}: ${d.note ?? 'wrong shape'}${d.actual === undefined ? '' : ` (actual ${preview(d.actual, max)})`}`];
    case 'type':
    case 'changed': {
      const [e, a] =
        typeof d.expected === 'string' && typeof d.actual === 'string'
          ? stringWindows(d.expected, d.actual, max)
          : [preview(d.expected, max), preview(d.actual, max)];
      const label = d.kind === 'type' ? `${d.path}: type differs` : `${d.path}:`;
      const one = `${label} expected ${e}, actual ${a}`;
      return one.length <= max + 40 ? [one] : [label, `    expected ${e}`, `    actual   ${a}`];
    }
  }
}

/**
 * Two long strings (hashes, call data, blobs) are shown around their first difference, which
 * a cut in the middle would hide.
 */
function stringWindows(x: string, y: string, max: number): [string, string] {
  if (x.length + 2 <= max && y.length + 2 <= max) return [JSON.stringify(x), JSON.stringify(y)];
  let i = 0;
  while (i < x.length && i < y.length && x[i] === y[i]) i++;
  const from = Math.max(0, i - 16);
  const show = (s: string): string => {
    const to = Math.min(s.length, from + max - 40);
    return `${from > 0 ? '…' : ''}${JSON.stringify(s.slice(from, to)).slice(1, -1)}${to < s.length ? '…' : ''} (${s.length} chars, differs at ${i})`;
  };
  return [show(x), show(y)];
}

/** The diff of a verdict, one group of lines per difference, with a note when some were left out. */
export function formatVerdict(v: Verdict, max = 120): string[][] {
  const groups = v.differences.map((d) => formatDifference(d, max));
  if (v.total > v.differences.length) groups.push([`… ${v.total - v.differences.length} more differences`]);
  return groups;
}

/** Whole groups up to about `n` lines (at least one group), and a note on what was left out. */
export function head(groups: string[][], n: number): string[] {
  const out: string[] = [];
  let shown = 0;
  for (const g of groups) {
    if (shown > 0 && out.length + g.length > n) break;
    out.push(...g);
    shown++;
  }
  const left = groups.slice(shown).reduce((k, g) => k + g.length, 0);
  if (left > 0) out.push(`… ${left} more lines (--verbose shows all)`);
  return out;
}
