// The rpc-compat runner's parts, on the kit's real fixture files: the loader, the comparator
// (hive's rules), the speconly shape checks, the diffs, the settings and the report.
// The kit is test/fixtures/rpc-compat in the repository, or $RPC_COMPAT_DIR.

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareResponse, diffJson, redactErrorMessages, type Verdict } from '../compat/compare.js';
import { ConfigError, EXCEPTIONS_FILE, loadExceptions, loadFloor, MAX_EXCEPTIONS } from '../compat/config.js';
import { FixtureError, kitDir, loadFixtures, parseFixture, walkIoFiles, type Fixture } from '../compat/fixtures.js';
import { formatVerdict, head } from '../compat/format.js';
import { isObject, JsonNumber, parseJson, stringify, type Json, type JsonObject } from '../compat/json.js';
import { chainHead } from '../compat/node.js';
import { replayFixture, type FixtureResult } from '../compat/replay.js';
import { checkFloor, renderReport, summarize } from '../compat/report.js';

const kit = kitDir();
const fixtures = loadFixtures(kit);
const fixture = (name: string): Fixture => {
  const f = fixtures.find((x) => x.name === name);
  if (f === undefined) throw new Error(`no fixture ${name}`);
  return f;
};
const expectedOf = (name: string, i = 0): Json => fixture(name).exchanges[i]!.expected;
const copy = (v: Json): Json => parseJson(stringify(v));
const obj = (v: Json | undefined): JsonObject => {
  if (!isObject(v)) throw new Error(`not an object: ${stringify(v ?? null)}`);
  return v;
};
const compare = (name: string, actual: Json, i = 0): Verdict => {
  const f = fixture(name);
  return compareResponse({ method: f.method, speconly: f.speconly, expected: f.exchanges[i]!.expected, actual });
};
const diffText = (v: Verdict): string => formatVerdict(v).flat().join('\n');

/** The same value written differently: keys in reverse order, every number in another form. */
function rewrite(v: Json): Json {
  if (v instanceof JsonNumber) {
    if (/[eE]/.test(v.literal)) return v;
    return new JsonNumber(v.literal.includes('.') ? `${v.literal}00e0` : `${v.literal}.000e0`);
  }
  if (Array.isArray(v)) return v.map(rewrite);
  if (isObject(v)) {
    const out = Object.create(null) as JsonObject;
    for (const k of Object.keys(v).reverse()) out[k] = rewrite(v[k]!);
    return out;
  }
  return v;
}

/** Every object holding an `error` object with a `message`, with its path. */
function errorHolders(v: Json, path = '$', out: { path: string; holder: JsonObject }[] = []): { path: string; holder: JsonObject }[] {
  if (Array.isArray(v)) v.forEach((x, i) => errorHolders(x, `${path}[${i}]`, out));
  else if (isObject(v)) {
    const e = v.error;
    if (isObject(e) && 'message' in e) out.push({ path, holder: v });
    for (const k of Object.keys(v)) errorHolders(v[k]!, `${path}.${k}`, out);
  }
  return out;
}

describe('fixture loader', () => {
  it('reads all 177 files with 178 request/response pairs, in walk order', () => {
    expect(fixtures).toHaveLength(177);
    expect(fixtures.reduce((n, f) => n + f.exchanges.length, 0)).toBe(178);
    const names = fixtures.map((f) => f.name);
    expect(names).toEqual([...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
    expect(names[0]).toBe('eth_blockNumber/simple-test.io');
    expect(fixture('eth_estimateGas/estimate-with-eip7702.io').exchanges).toHaveLength(2);
    for (const f of fixtures) {
      expect(f.description.length, f.name).toBeGreaterThan(0);
      for (const ex of f.exchanges) expect(obj(parseJson(ex.request)).method, f.name).toBe(f.method);
    }
  });

  it('counts per method match the kit README table', () => {
    const readme = readFileSync(join(kit, 'README.md'), 'utf8');
    const table = new Map<string, number>();
    for (const m of readme.matchAll(/^\| ((?:eth|net|web3)_\w+) \| (\d+) \|/gm)) table.set(m[1]!, Number(m[2]));
    expect(table.size).toBe(21);
    const counted = new Map<string, number>();
    for (const f of fixtures) counted.set(f.method, (counted.get(f.method) ?? 0) + 1);
    for (const [method, n] of table) expect(counted.get(method) ?? 0, method).toBe(n);
    for (const method of counted.keys()) expect(table.has(method), method).toBe(true);
    expect(Number(/\| \*\*total\*\* \| \*\*(\d+)\*\* \| (\d+) request\/response pairs/.exec(readme)?.[1])).toBe(fixtures.length);
  });

  it('finds the speconly files (5 of 6 eth_estimateGas, the eth_feeHistory file) and the error fixtures the README counts', () => {
    const spec = fixtures.filter((f) => f.speconly);
    expect(spec.map((f) => f.method).sort()).toEqual([...Array<string>(5).fill('eth_estimateGas'), 'eth_feeHistory']);
    expect(fixture('eth_estimateGas/estimate-simple-transfer.io').speconly).toBe(false);
    expect(fixture('eth_estimateGas/estimate-failed-call.io').description).toEqual([
      'estimates a contract call that reverts',
      'speconly: client response is only checked for schema validity.',
    ]);
    const simulateWithErrors = fixtures.filter((f) => f.method === 'eth_simulateV1' && errorHolders(f.exchanges[0]!.expected).length > 0);
    expect(simulateWithErrors).toHaveLength(32);
  });

  it('parses comments, pairs and whitespace per the README, and rejects anything else with the line', () => {
    const f = parseFixture(
      'm/x.io',
      '\n  // first\n//speconly: yes\n\n  >>  {"id":1}  \n// after the request: ignored\n<< {"id":1,"result":null}\n// speconly: too late\n',
    );
    expect(f).toMatchObject({ method: 'm', description: ['first', 'speconly: yes'], speconly: true });
    expect(f.exchanges).toEqual([{ request: '{"id":1}', expected: parseJson('{"id":1,"result":null}'), requestLine: 5, responseLine: 7 }]);
    expect(parseFixture('m/y.io', '// x\n>> {}\n<< {}\n// speconly: after\n').speconly).toBe(false);
    const bad: [string, RegExp][] = [
      ['>> {}\n<< {}\nplain text\n', /m\/z\.io:3: invalid line/],
      ['<< {}\n', /:1: response without a request/],
      ['>> {}\n>> {}\n<< {}\n', /:2: request without a response/],
      ['>> {}\n', /:1: request without a response at the end/],
      ['>> {"a":}\n<< {}\n', /:1: invalid JSON request/],
      ['>> {}\n<< {"a":1,}\n', /:2: invalid JSON response/],
      ['>> [{}]\n<< {}\n', /:1: the request is not a JSON object/],
      ['// only a comment\n', /no request/],
    ];
    for (const [text, message] of bad) expect(() => parseFixture('m/z.io', text), text).toThrow(message);
    expect(() => parseFixture('m/z.io', 'x')).toThrow(FixtureError);
  });

  it('walks like filepath.Walk: per-directory byte order, directories where they sort, .io only', () => {
    const root = mkdtempSync(join(tmpdir(), 'compat-walk-'));
    try {
      for (const d of ['a', 'a.b', 'B']) mkdirSync(join(root, d));
      for (const f of ['a/x.io', 'a.b/y.io', 'a-c.io', 'B/z.io', 'a/notes.txt', 'a/w.io']) writeFileSync(join(root, f), '');
      // Sorting full paths would put a-c.io and a.b/ before a/ ('-' and '.' sort before '/').
      expect(walkIoFiles(root)).toEqual(['B/z.io', 'a/w.io', 'a/x.io', 'a-c.io', 'a.b/y.io']);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('reads the chain file: 54 blocks whose head is the block headfcu.json names', () => {
    const fcu = JSON.parse(readFileSync(join(kit, 'chain', 'headfcu.json'), 'utf8')) as { params: [{ headBlockHash: string }] };
    expect(chainHead(join(kit, 'chain', 'chain.rlp'))).toEqual({ blocks: 54, number: 54, hash: fcu.params[0].headBlockHash });
  });
});

describe('comparator', () => {
  it('numbers compare by value, exactly', () => {
    const same = (a: string, b: string): boolean => diffJson(parseJson(a), parseJson(b)).total === 0;
    expect(same('[1, 1.0, 1e0, 10e-1, 0.1e1, -0, 0.00072868]', '[1.00, 100e-2, 1, 1, 1, 0, 7.2868e-4]')).toBe(true);
    expect(same('9007199254740993', '9007199254740992')).toBe(false); // equal as doubles
    expect(same('1', '"1"')).toBe(false);
    expect(same('{"a":1,"b":[true,null]}', '{"b":[true,null],"a":1}')).toBe(true);
  });

  it('accepts every recorded response written with other key order and number forms', () => {
    for (const f of fixtures) {
      for (const ex of f.exchanges) {
        const actual = parseJson(stringify(rewrite(ex.expected)));
        expect(stringify(actual), f.name).not.toBe(stringify(ex.expected));
        const v = compareResponse({ method: f.method, speconly: f.speconly, expected: ex.expected, actual });
        expect(v.pass, `${f.name}\n${diffText(v)}`).toBe(true);
      }
    }
  });

  it('rejects an extra key and a missing key, naming the path', () => {
    const name = 'eth_getBlockByNumber/get-latest.io';
    const extra = copy(expectedOf(name));
    obj(obj(extra).result).totalDifficulty = '0x0';
    let v = compare(name, extra);
    expect(v.pass).toBe(false);
    expect(v.differences).toEqual([{ path: '$.result.totalDifficulty', kind: 'extra', actual: '0x0' }]);
    const missing = copy(expectedOf(name));
    const tx = obj((obj(obj(missing).result).transactions as Json[])[0]);
    delete tx.blockTimestamp;
    delete tx.v;
    v = compare(name, missing);
    expect(v.differences.map((d) => [d.path, d.kind])).toEqual([
      ['$.result.transactions[0].blockTimestamp', 'missing'],
      ['$.result.transactions[0].v', 'missing'],
    ]);
    // jsonrpc and id count too.
    const envelope = copy(expectedOf('eth_chainId/get-chain-id.io'));
    obj(envelope).id = new JsonNumber('2');
    expect(compare('eth_chainId/get-chain-id.io', envelope).differences.map((d) => d.path)).toEqual(['$.id']);
  });

  it('drops a top-level error message only when both sides have one', () => {
    const name = 'eth_getStorageAt/get-storage-invalid-key.io';
    const other = copy(expectedOf(name));
    obj(obj(other).error).message = 'a different wording';
    const v = compare(name, other);
    expect(v).toMatchObject({ pass: true, redacted: 1 });
    const noMessage = copy(expectedOf(name));
    delete obj(obj(noMessage).error).message;
    expect(compare(name, noMessage).differences).toEqual([expect.objectContaining({ path: '$.error.message', kind: 'missing' })]);
    const wrongCode = copy(other);
    obj(obj(wrongCode).error).code = new JsonNumber('-32000');
    expect(compare(name, wrongCode).differences.map((d) => d.path)).toEqual(['$.error.code']);
    // A message the recording lacks is an extra key.
    const r = redactErrorMessages(parseJson('{"error":{"code":1}}'), parseJson('{"error":{"code":1,"message":"m"}}'));
    expect(r.count).toBe(0);
    expect(diffJson(r.expected, r.actual).differences).toEqual([{ path: '$.error.message', kind: 'extra', actual: 'm' }]);
    // An error where a result is recorded fails.
    expect(compare('eth_chainId/get-chain-id.io', parseJson('{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x"}}')).pass).toBe(false);
  });

  it('drops nested (per-call) error messages of eth_simulateV1, and still checks their code and data', () => {
    const f = fixtures.find((x) => x.method === 'eth_simulateV1' && errorHolders(x.exchanges[0]!.expected).some((h) => h.path.startsWith('$.result')));
    expect(f).toBeDefined();
    const name = f!.name;
    const actual = copy(expectedOf(name));
    const holders = errorHolders(actual).filter((h) => h.path.startsWith('$.result'));
    for (const h of holders) obj(h.holder.error).message = 'client wording';
    expect(compare(name, actual)).toMatchObject({ pass: true, redacted: holders.length });
    const first = holders[0]!;
    delete obj(first.holder.error).message;
    expect(compare(name, actual).differences).toEqual([expect.objectContaining({ path: `${first.path}.error.message`, kind: 'missing' })]);
    obj(first.holder.error).message = 'x';
    obj(first.holder.error).code = new JsonNumber('-32000');
    expect(compare(name, actual).differences.map((d) => d.path)).toEqual([`${first.path}.error.code`]);
  });

  it('speconly with a result: shape only (hex quantity for eth_estimateGas), envelope still exact', () => {
    const name = 'eth_estimateGas/estimate-successful-call.io';
    const answer = (result: string, id = '1', extra = ''): Json => parseJson(`{"jsonrpc":"2.0","id":${id},"result":${result}${extra}}`);
    expect(compare(name, answer('"0x1234"'))).toMatchObject({ pass: true, mode: 'shape' });
    expect(compare(name, answer('"0x0"')).pass).toBe(true);
    for (const bad of ['"0x01234"', '"0xABC"', '"1234"', '4660', 'null', '"0x"']) expect(compare(name, answer(bad)).pass, bad).toBe(false);
    expect(compare(name, answer('"0x1"', '7')).differences.map((d) => d.path)).toEqual(['$.id']);
    expect(compare(name, answer('"0x1"', '1', ',"extra":1')).differences.map((d) => d.path)).toEqual(['$.extra']);
    // Not speconly: the value must be the recorded one.
    expect(compare('eth_estimateGas/estimate-simple-transfer.io', answer('"0x5209"')).differences).toEqual([
      { path: '$.result', kind: 'changed', expected: '0x5208', actual: '0x5209' },
    ]);
  });

  it('speconly files expecting an error: an error is compared normally (code, data), a result is shape-checked', () => {
    const name = 'eth_estimateGas/estimate-failed-call.io';
    const recorded = obj(expectedOf(name));
    expect(obj(recorded.error).code).toEqual(new JsonNumber('3'));
    const same = copy(recorded);
    obj(obj(same).error).message = 'reverted';
    expect(compare(name, same)).toMatchObject({ pass: true, mode: 'exact', redacted: 1 });
    const otherCode = copy(same);
    obj(obj(otherCode).error).code = new JsonNumber('-32000');
    expect(compare(name, otherCode).differences.map((d) => d.path)).toEqual(['$.error.code']);
    const otherData = copy(same);
    obj(obj(otherData).error).data = '0x';
    expect(compare(name, otherData).differences.map((d) => d.path)).toEqual(['$.error.data']);
    // hive's rule: a speconly test answered with a result is only checked against the schema.
    expect(compare(name, parseJson('{"jsonrpc":"2.0","id":1,"result":"0x5208"}'))).toMatchObject({ pass: true, mode: 'shape' });
  });

  it('speconly eth_feeHistory: keys and types of the schema', () => {
    const name = 'eth_feeHistory/fee-history.io';
    expect(compare(name, copy(expectedOf(name)))).toMatchObject({ pass: true, mode: 'shape' });
    const withResult = (edit: (r: JsonObject) => void): Verdict => {
      const a = copy(expectedOf(name));
      edit(obj(obj(a).result));
      return compare(name, a);
    };
    expect(withResult((r) => ((r.oldestBlock = '0x2'), (r.gasUsedRatio = [new JsonNumber('1'), new JsonNumber('0')]))).pass).toBe(true);
    expect(withResult((r) => (delete r.baseFeePerBlobGas, delete r.blobGasUsedRatio, delete r.reward)).pass).toBe(true);
    const fails: [string, (r: JsonObject) => void, string][] = [
      ['missing gasUsedRatio', (r) => delete r.gasUsedRatio, '$.result.gasUsedRatio'],
      ['extra key', (r) => (r.totalDifficulty = '0x0'), '$.result.totalDifficulty'],
      ['ratio above 1', (r) => (r.gasUsedRatio = [new JsonNumber('1.5')]), '$.result.gasUsedRatio[0]'],
      ['ratio as a string', (r) => (r.blobGasUsedRatio = ['0']), '$.result.blobGasUsedRatio[0]'],
      ['reward not nested', (r) => (r.reward = ['0x1']), '$.result.reward[0]'],
      ['padded quantity', (r) => (r.baseFeePerGas = ['0x01']), '$.result.baseFeePerGas[0]'],
      ['oldestBlock as a number', (r) => (r.oldestBlock = new JsonNumber('27')), '$.result.oldestBlock'],
    ];
    for (const [what, edit, path] of fails) {
      const v = withResult(edit);
      expect(v.pass, what).toBe(false);
      expect(
        v.differences.map((d) => d.path),
        what,
      ).toEqual([path]);
    }
    // A method without a shape cannot pass a speconly fixture unchecked.
    expect(
      compareResponse({
        method: 'eth_unknown',
        speconly: true,
        expected: parseJson('{"jsonrpc":"2.0","id":1,"result":1}'),
        actual: parseJson('{"jsonrpc":"2.0","id":1,"result":1}'),
      }).pass,
    ).toBe(false);
  });
});

describe('diffs and report', () => {
  it('names the path of each difference and cuts long values around the first difference', () => {
    const name = 'eth_getBlockByNumber/get-latest.io';
    const a = copy(expectedOf(name));
    const r = obj(obj(a).result);
    r.gasUsed = '0x1';
    r.logsBloom = `${(r.logsBloom as string).slice(0, 300)}f${(r.logsBloom as string).slice(301)}`;
    const text = diffText(compare(name, a));
    expect(text).toContain(`$.result.gasUsed: expected "${obj(obj(expectedOf(name)).result).gasUsed as string}", actual "0x1"`);
    expect(text).toMatch(/\$\.result\.logsBloom:\n {4}expected ….{10,}… \(514 chars, differs at 300\)\n {4}actual {3}…/);
    expect(text.split('\n').every((l) => l.length < 200)).toBe(true);
    const groups = [['a'], ['b', 'c', 'd'], ['e']];
    expect(head(groups, 3)).toEqual(['a', '… 4 more lines (--verbose shows all)']);
    expect(head(groups, 1)).toEqual(['a', '… 4 more lines (--verbose shows all)']);
    expect(head(groups, 10)).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('counts exceptions apart from failures, and holds passes to the floor', () => {
    const pick = fixtures.slice(0, 4);
    const results: FixtureResult[] = pick.map((f, i) => ({
      fixture: f,
      pass: i === 0 || i === 3,
      ms: 1,
      ...(i === 1 || i === 2 ? { failedAt: 0, problem: 'no answer within 5 s' } : {}),
    }));
    const s = summarize(
      results,
      new Map([
        [pick[2]!.name, 'an L2 cannot'],
        [pick[3]!.name, 'stale'],
      ]),
    );
    expect(s).toMatchObject({ passed: 2, failed: 1, excepted: 1, files: 4, exceptionsPassing: [pick[3]!.name] });
    expect(s.failures.map((r) => r.fixture.name)).toEqual([pick[1]!.name]);
    const text = renderReport(s, { verbose: false, diffLines: 8 }).join('\n');
    expect(text).toContain(`FAIL ${pick[1]!.name} (request 1 of 1, line`);
    expect(text).toContain(`EXCEPTION ${pick[2]!.name}`);
    expect(text).toContain(`PASSES NOW ${pick[3]!.name}`);
    expect(text).toMatch(/total\s+2\s+1\s+1\s+4/);
    expect(checkFloor(10, 11, false).ok).toBe(false);
    expect(checkFloor(11, 11, false)).toEqual({ ok: true, message: '11 files pass, at the floor of 11' });
    expect(checkFloor(12, 11, false).message).toContain('raise "minPassing" in test/compat/floor.json to 12');
    expect(checkFloor(1, 11, true).ok).toBe(true);
  });

  it('checked-in settings are valid; exceptions are limited to three known fixtures with reasons', () => {
    const names = fixtures.map((f) => f.name);
    expect(loadExceptions(names).size).toBeLessThanOrEqual(MAX_EXCEPTIONS);
    expect(loadFloor()).toBeGreaterThanOrEqual(0);
    expect(readFileSync(EXCEPTIONS_FILE, 'utf8')).toBeTruthy();
    const dir = mkdtempSync(join(tmpdir(), 'compat-config-'));
    const file = join(dir, 'e.json');
    const load = (content: unknown): Map<string, string> => {
      writeFileSync(file, JSON.stringify(content));
      return loadExceptions(names, file);
    };
    try {
      expect(load({ [names[0]!]: 'reason' }).get(names[0]!)).toBe('reason');
      expect(() => load(Object.fromEntries(names.slice(0, 4).map((n) => [n, 'r'])))).toThrow(/at most 3/);
      expect(() => load({ 'eth_call/nope.io': 'r' })).toThrow(/not a fixture/);
      expect(() => load({ [names[0]!]: ' ' })).toThrow(ConfigError);
      expect(() => load(['x'])).toThrow(ConfigError);
      writeFileSync(file, '{"minPassing": -1}');
      expect(() => loadFloor(file)).toThrow(ConfigError);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('replay transport', () => {
  // A plain HTTP endpoint whose answers the test sets: the runner's handling of bodies that
  // are not JSON and of slow answers, which the node itself is not expected to produce.
  let server: Server;
  let url = '';
  let answer: (body: string) => { delayMs?: number; status?: number; text: string } = () => ({ text: '' });
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        const a = answer(body);
        setTimeout(() => res.writeHead(a.status ?? 200, { 'content-type': 'application/json' }).end(a.text), a.delayMs ?? 0);
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const addr = server.address();
    url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((ok) => server.close(() => ok()));
  });

  it('sends each request as written and compares every pair; stops at the first mismatch', async () => {
    const f = fixture('eth_estimateGas/estimate-with-eip7702.io');
    const seen: string[] = [];
    answer = (body) => {
      seen.push(body);
      return { text: `{"jsonrpc":"2.0","id":${seen.length},"result":"0x5208"}` };
    };
    expect(await replayFixture(url, f)).toMatchObject({ pass: true });
    expect(seen).toEqual(f.exchanges.map((e) => e.request));
    seen.length = 0;
    answer = () => ({ status: 500, text: '{"jsonrpc":"2.0","id":9,"result":"0x1"}' });
    const r = await replayFixture(url, f);
    expect(r).toMatchObject({ pass: false, failedAt: 0, problem: 'HTTP 500' });
    expect(r.verdict!.differences.map((d) => d.path)).toEqual(['$.id']);
  });

  it('reports a body that is not JSON, and a request that times out', async () => {
    const f = fixture('eth_chainId/get-chain-id.io');
    answer = () => ({ status: 502, text: '<html>bad gateway</html>' });
    expect((await replayFixture(url, f)).problem).toMatch(/^HTTP 502, body is not JSON .*bad gateway/);
    answer = () => ({ delayMs: 1_000, text: stringify(f.exchanges[0]!.expected) });
    expect(await replayFixture(url, f, 200)).toMatchObject({ pass: false, problem: 'no answer within 0.2 s' });
    answer = () => ({ text: stringify(f.exchanges[0]!.expected) });
    expect((await replayFixture(url, f)).pass).toBe(true);
  });
});
