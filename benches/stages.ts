// Where a request's instructions go, stage by stage, from the callgrind dumps that
// `npm run bench:instructions -- --keep DIR --out FILE` keeps: the inclusive cost of the
// functions that begin each stage (callgrind_annotate --inclusive), per request, with the
// idle spell's share (builder ticks, timers) taken off for the time each class took.
//
//   node --import tsx benches/stages.ts /tmp/i.json
//
// Stages (instructions per request; a batch's per item):
//   transport  uSockets and uWS: reading, HTTP parsing, the event loop; what the stages below
//              leave (the guard's share included, and shown apart)
//   guard      the uWebSockets.js guard's own work (crates/uws-guard: Stream::read)
//   route      the POST handler in JavaScript: the head's fields, the framing check, the
//              body callback's registration
//   parse      the body's UTF-8 decoding (Buffer#toString) and JSON.parse
//   dispatch   JavaScript from the parsed body to the answer's text, on both sides of a work
//              pool: envelope checks, method lookup, validation, fairness and rate limits,
//              metrics and slow-request timing, the promise's resolution and continuation
//   native     the addon's calls on the event loop: arguments in, the read (or the job and
//              its promise handed to a pool), the result text out
//   execution  revm on a work pool (eth_call, eth_simulateV1), rendering excluded
//   pool       the rest of the addon's threads: the request's JSON decoded, the result
//              rendered, the queue; the builder's share beyond the idle rate
//   write      res.cork: status, headers and body handed to the socket

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

interface Dumped {
  name: string;
  idleDump?: { files: string[]; seconds: number };
  classes: { name: string; requests: number; items: number; seconds: number; dump?: string[] }[];
}

/** Inclusive instructions by function (the largest entry of a name that recursion splits). */
function inclusive(file: string): { total: number; fns: Map<string, number> } {
  const text = execFileSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', file], { encoding: 'utf8', maxBuffer: 512 << 20 });
  const fns = new Map<string, number>();
  let total = 0;
  for (const line of text.split('\n')) {
    const m = /^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$/.exec(line);
    if (!m) continue;
    const n = Number(m[1]!.replace(/,/g, ''));
    if (m[2] === 'PROGRAM TOTALS') total = n;
    else if ((fns.get(m[2]!) ?? 0) < n) fns.set(m[2]!, n);
  }
  return { total, fns };
}

/** Sum of the entries whose name matches: each pattern names entry points that do not nest. */
const sum = (fns: Map<string, number>, patterns: RegExp[]): number => {
  let s = 0;
  for (const [name, n] of fns) if (patterns.some((p) => p.test(name))) s += n;
  return s;
};

export const STAGES = ['total', 'transport', 'guard', 'route', 'parse', 'dispatch', 'native', 'execution', 'pool', 'write'] as const;
type Stage = (typeof STAGES)[number];

export function stages(file: string): Record<Stage, number> {
  const { total, fns } = inclusive(file);
  // uWS's calls into JavaScript: the route's handler and the body's callback; and libuv's
  // wake-up for an answer from a pool (the promise resolved, its continuation run).
  const route = sum(fns, [/large_handler<uWS::HttpContext<false>::onHttp\(/]);
  const body = sum(fns, [/large_handler<HttpResponseWrapper::res_onData<0>.*::call\(/]);
  const completion = sum(fns, [/:uv__async_io \[/]);
  const parse = sum(fns, [/JsonParser<unsigned (char|short)>::ParseJson\(/, /StringSlice<\(node::encoding\)1>/]);
  const write = sum(fns, [/void HttpResponseWrapper::res_cork<0>\(/]);
  const native = sum(fns, [/__napi_impl_helper_\w+::\w+_c_callback \[/]);
  // Every thread the addon starts (std's thread_start), whatever it runs.
  const threads = sum(fns, [/<std::sys::thread::unix::Thread>::new::thread_start \[.*preconf-node/]);
  const execution = sum(fns, [/:preconf_chain::exec::\w+::(call|simulate) \[/]);
  const guard = sum(fns, [/preconf_uws_guard::stream::Stream::read \[/]);
  return {
    total,
    transport: total - route - body - completion - threads,
    guard,
    route,
    parse,
    dispatch: body + completion - parse - write - native,
    native,
    execution,
    pool: threads - execution,
    write,
  };
}

/** The stages of one dump, summed over its threads' files. */
function stagesOf(files: string[]): Record<Stage, number> {
  const out = Object.fromEntries(STAGES.map((k) => [k, 0])) as Record<Stage, number>;
  for (const f of files) {
    const s = stages(f);
    for (const k of STAGES) out[k] += s[k];
  }
  return out;
}

function main(): void {
  const file = process.argv[2];
  if (!file) throw new Error('usage: node --import tsx benches/stages.ts RESULTS.json (from bench:instructions --keep DIR --out FILE)');
  const run = JSON.parse(readFileSync(file, 'utf8')) as { targets: Dumped[] };
  const rows: string[] = [`| target | class | ${STAGES.join(' | ')} |`, `|---|---|${STAGES.map(() => '---:').join('|')}|`];
  for (const t of run.targets) {
    const idle = t.idleDump ? stagesOf(t.idleDump.files) : null;
    for (const c of t.classes) {
      if (!c.dump) continue;
      const s = stagesOf(c.dump);
      const scale = idle && t.idleDump ? c.seconds / t.idleDump.seconds : 0;
      const per = (k: Stage) => {
        const n = (s[k] - (idle ? idle[k] * scale : 0)) / c.requests / c.items;
        return `${(n / 1000).toFixed(1)} k`;
      };
      rows.push(`| ${t.name} | ${c.name} | ${STAGES.map(per).join(' | ')} |`);
    }
  }
  process.stdout.write(`${rows.join('\n')}\n`);
}

main();
