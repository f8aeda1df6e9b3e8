// A strict reader of the Prometheus text exposition format (version 0.0.4), for tests:
// it rejects what Prometheus would (bad names, label syntax, values, a TYPE after samples,
// duplicate series) and checks histograms (cumulative buckets, +Inf equal to _count).

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: string;
  help?: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/** Values as Prometheus reads them (Go's ParseFloat: NaN and Inf in any case). */
function parseValue(s: string, line: string): number {
  if (/^nan$/i.test(s)) return NaN; // prom-client prints "Nan" for an empty event-loop monitor
  if (/^\+?inf(inity)?$/i.test(s)) return Infinity;
  if (/^-inf(inity)?$/i.test(s)) return -Infinity;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) throw new Error(`bad value "${s}" in: ${line}`);
  return Number(s);
}

function parseLabels(s: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < s.length) {
    const eq = s.indexOf('=', i);
    if (eq < 0) throw new Error(`bad labels in: ${line}`);
    const name = s.slice(i, eq);
    if (!LABEL.test(name)) throw new Error(`bad label name "${name}" in: ${line}`);
    if (s[eq + 1] !== '"') throw new Error(`label value not quoted in: ${line}`);
    let j = eq + 2;
    let value = '';
    for (; j < s.length && s[j] !== '"'; j++) {
      if (s[j] === '\\') {
        const e = s[++j];
        if (e === 'n') value += '\n';
        else if (e === '\\' || e === '"') value += e;
        else throw new Error(`bad escape in: ${line}`);
      } else value += s[j];
    }
    if (j >= s.length) throw new Error(`unterminated label value in: ${line}`);
    if (name in labels) throw new Error(`duplicate label ${name} in: ${line}`);
    labels[name] = value;
    i = j + 1;
    if (s[i] === ',') i++;
    else if (i < s.length) throw new Error(`expected , between labels in: ${line}`);
  }
  return labels;
}

/** The family a sample belongs to: itself, or a histogram/summary it is a part of. */
function familyOf(name: string, families: Map<string, Family>): Family | undefined {
  if (families.has(name)) return families.get(name);
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!name.endsWith(suffix)) continue;
    const f = families.get(name.slice(0, -suffix.length));
    if (f && (f.type === 'histogram' || (f.type === 'summary' && suffix !== '_bucket'))) return f;
  }
  return undefined;
}

export function parsePrometheus(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const seen = new Set<string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) continue; // a plain comment
      const [, kind, name, rest] = m as unknown as [string, string, string, string];
      if (!NAME.test(name)) throw new Error(`bad metric name in: ${line}`);
      const f = families.get(name) ?? { name, type: 'untyped', samples: [] };
      if (kind === 'TYPE') {
        if (!TYPES.has(rest)) throw new Error(`bad type in: ${line}`);
        if (f.samples.length > 0 || (families.has(name) && f.type !== 'untyped')) throw new Error(`TYPE after samples or twice: ${line}`);
        f.type = rest;
      } else f.help = rest;
      families.set(name, f);
      continue;
    }
    const m = /^([^\s{]+)(?:\{(.*)\})?\s+(\S+)(?:\s+(-?\d+))?$/.exec(line);
    if (!m) throw new Error(`bad sample line: ${line}`);
    const [, name, labelText, valueText] = m as unknown as [string, string, string | undefined, string];
    if (!NAME.test(name)) throw new Error(`bad metric name in: ${line}`);
    const labels = labelText === undefined ? {} : parseLabels(labelText, line);
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seen.has(key)) throw new Error(`duplicate series: ${line}`);
    seen.add(key);
    let f = familyOf(name, families);
    if (!f) families.set(name, (f = { name, type: 'untyped', samples: [] }));
    f.samples.push({ name, labels, value: parseValue(valueText, line) });
  }
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}

function checkHistogram(f: Family): void {
  const series = new Map<string, { buckets: [number, number][]; count?: number; sum?: number }>();
  for (const s of f.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const e = series.get(key) ?? { buckets: [] };
    series.set(key, e);
    if (s.name === `${f.name}_bucket`) {
      if (le === undefined) throw new Error(`${f.name}_bucket without le`);
      e.buckets.push([parseValue(le, le), s.value]);
    } else if (s.name === `${f.name}_count`) e.count = s.value;
    else if (s.name === `${f.name}_sum`) e.sum = s.value;
  }
  for (const [key, e] of series) {
    if (e.count === undefined || e.sum === undefined) throw new Error(`${f.name}${key}: no _count or _sum`);
    const sorted = [...e.buckets].sort((a, b) => a[0] - b[0]);
    if (sorted.at(-1)?.[0] !== Infinity) throw new Error(`${f.name}${key}: no +Inf bucket`);
    for (let i = 1; i < sorted.length; i++) {
      if (sorted[i]![1] < sorted[i - 1]![1]) throw new Error(`${f.name}${key}: buckets not cumulative`);
    }
    if (sorted.at(-1)![1] !== e.count) throw new Error(`${f.name}${key}: +Inf bucket ${sorted.at(-1)![1]} != count ${e.count}`);
  }
}

/** The value of one series (0 when absent: a counter not yet touched). */
export function valueOf(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  for (const f of families.values()) {
    for (const s of f.samples) {
      if (s.name !== name) continue;
      const keys = Object.keys(s.labels);
      if (keys.length === Object.keys(labels).length && keys.every((k) => s.labels[k] === labels[k])) return s.value;
    }
  }
  return 0;
}

/** GETs /metrics (on a fresh connection) and parses it. */
export async function scrape(url: string): Promise<{ families: Map<string, Family>; contentType: string | null; text: string }> {
  const res = await fetch(`${url}/metrics`, { headers: { connection: 'close' } });
  if (res.status !== 200) throw new Error(`GET /metrics: ${res.status} ${await res.text()}`);
  const text = await res.text();
  return { families: parsePrometheus(text), contentType: res.headers.get('content-type'), text };
}
