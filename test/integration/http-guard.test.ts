// The uWebSockets.js guard (crates/uws-guard), on by default:
// HTTP/1.0 is answered and the connection closed (curl --http1.0, and nginx's default to
// upstreams); verbs and request lines uWebSockets.js would drop are answered; a WebSocket
// that breaks RFC 6455 or sends a message over the limit is closed with 1002, 1007 or 1009
// and a reason, not dropped. With --threads 2 every event loop is guarded.

import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawPost, rpc, startTestNode, type TestNode } from '../helpers/node.js';
import { parseResponse, rawExchange } from '../helpers/raw-http.js';
import { RawWs } from '../helpers/ws.js';
import { spawnNode, type NodeProcess } from '../helpers/process.js';

const run = promisify(execFile);
const CHAIN_ID = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}';

/** A client frame: masked unless told otherwise, with any header bits. */
function frame(opcode: number, payload: Buffer, opts: { fin?: boolean; rsv?: number; masked?: boolean; length?: number } = {}): Buffer {
  const { fin = true, rsv = 0, masked = true } = opts;
  const n = opts.length ?? payload.length;
  const head = [((fin ? 0x80 : 0) | (rsv << 4) | opcode) & 0xff];
  const maskBit = masked ? 0x80 : 0;
  if (n < 126) head.push(maskBit | n);
  else if (n < 65536) head.push(maskBit | 126, n >> 8, n & 0xff);
  else {
    head.push(maskBit | 127);
    const big = Buffer.alloc(8);
    big.writeBigUInt64BE(BigInt(n));
    head.push(...big);
  }
  if (!masked) return Buffer.concat([Buffer.from(head), payload]);
  const key = randomBytes(4);
  const body = Buffer.from(payload.map((b, i) => b ^ key[i & 3]!));
  return Buffer.concat([Buffer.from(head), key, body]);
}

const UPGRADE = `GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`;

/** The close frame's code and reason in what the server sent after the 101 answer. */
function closeOf(text: string): { code: number; reason: string } | undefined {
  const bytes = Buffer.from(text.slice(text.indexOf('\r\n\r\n') + 4), 'latin1');
  for (let at = 0; at + 2 <= bytes.length; ) {
    const opcode = bytes[at]! & 0x0f;
    let len = bytes[at + 1]! & 0x7f;
    let head = 2;
    if (len === 126) {
      len = bytes.readUInt16BE(at + 2);
      head = 4;
    }
    if (opcode === 8) return { code: bytes.readUInt16BE(at + head), reason: bytes.subarray(at + head + 2, at + head + len).toString('utf8') };
    at += head + len;
  }
  return undefined;
}

describe('the uWebSockets.js guard', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode({ configure: (c) => void (c.server.maxBodyBytes = 64 * 1024) });
  });
  afterAll(() => t?.stop());

  it('answers curl --http1.0 (GET /health and POST /) and closes the connection', async () => {
    const health = await run('curl', ['-s', '-i', '-m', '5', '--http1.0', `${t.node.url}/health`]);
    expect(health.stdout).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(JSON.parse(health.stdout.slice(health.stdout.indexOf('\r\n\r\n') + 4)).status).toBe('ok');
    const post = await run('curl', ['-s', '-m', '5', '--http1.0', '-H', 'content-type: application/json', '-d', CHAIN_ID, t.node.url]);
    expect(JSON.parse(post.stdout).result).toBe('0x7a69');
    // Without Host (HTTP/1.0 needs none), and the server closes after the answer.
    const raw = await rawExchange(t.node.port, 'GET /health HTTP/1.0\r\n\r\n', 3000);
    expect(parseResponse(raw.text).status).toBe(200);
    expect(raw.closed).toBe(true);
  });

  it('answers verbs and lines uWebSockets.js would drop; HTTP/1.1 passes through unchanged', async () => {
    const brew = await rawExchange(t.node.port, 'BREW / HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(parseResponse(brew.text).status).toBe(405);
    expect(parseResponse(brew.text).headers.allow).toBe('GET, HEAD, POST, OPTIONS');
    expect(parseResponse((await rawExchange(t.node.port, 'hello\r\n\r\n')).text).status).toBe(400);
    expect(parseResponse((await rawExchange(t.node.port, 'GET /health HTTP/1.1\r\n\r\n')).text).status).toBe(400);
    const te = await rawExchange(t.node.port, `POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n${CHAIN_ID}`);
    expect(parseResponse(te.text).status).toBe(400);
    expect(te.closed).toBe(true);
    expect((await rpc(t.node.url, 'eth_chainId')).result).toBe('0x7a69');
    const batch = await rawPost(t.node.url, `[${CHAIN_ID},${CHAIN_ID}]`);
    expect(batch.json).toHaveLength(2);
  });

  it('on a kept-alive connection, later requests are answered the same way (a body that looks like a head stays a body)', async () => {
    const body = 'GET / HTTP/1.0\r\n\r\n'; // not JSON: answered -32700, never read as a request
    const r = await rawExchange(
      t.node.port,
      `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body}GET /health HTTP/1.1\r\nHost: x\r\n\r\nBREW / HTTP/1.1\r\nHost: x\r\n\r\n`,
      3000,
    );
    const answers = r.text.split(/(?=HTTP\/1\.1 )/).map((a) => parseResponse(a));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 405]);
    expect(JSON.parse(answers[0]!.body).error.code).toBe(-32700);
    expect(r.closed).toBe(true);
    const framing = await rawExchange(
      t.node.port,
      `GET /health HTTP/1.1\r\nHost: x\r\n\r\nPOST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc`,
      3000,
    );
    expect(framing.text.split(/(?=HTTP\/1\.1 )/).map((a) => parseResponse(a).status)).toEqual([200, 400]);
    expect(framing.closed).toBe(true);
    const later10 = await rawExchange(t.node.port, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.0\r\n\r\n', 3000);
    expect(later10.text.split(/(?=HTTP\/1\.1 )/).map((a) => parseResponse(a).status)).toEqual([200, 200]);
    expect(later10.closed).toBe(true);
  });

  it('WebSocket: JSON-RPC works, frames sent with the upgrade request are read; violations close with 1002, 1007 or 1009 and a reason', async () => {
    const ok = await rawExchange(t.node.port, Buffer.concat([Buffer.from(UPGRADE), frame(1, Buffer.from(CHAIN_ID))]), 500);
    expect(ok.text).toContain('101 Switching Protocols');
    expect(ok.text).toContain('"result":"0x7a69"');
    const cases: [string, Buffer, number][] = [
      ['too big', frame(2, Buffer.alloc(0), { length: 6 * 1024 * 1024 }), 1009],
      ['too big in fragments', Buffer.concat([frame(1, Buffer.alloc(40_000, 0x20), { fin: false }), frame(0, Buffer.alloc(40_000, 0x20))]), 1009],
      ['reserved bits', frame(1, Buffer.from(CHAIN_ID), { rsv: 4 }), 1002],
      ['reserved opcode', frame(3, Buffer.from('x')), 1002],
      ['invalid UTF-8', frame(1, Buffer.from([0xff, 0xfe, 0x41])), 1007],
      [
        'UTF-8 split across fragments is fine, then an unmasked frame',
        Buffer.concat([frame(1, Buffer.from([0xe2, 0x82]), { fin: false }), frame(0, Buffer.from([0xac])), frame(1, Buffer.from('x'), { masked: false })]),
        1002,
      ],
      ['continuation without a message', frame(0, Buffer.from('x')), 1002],
      ['fragmented ping', frame(9, Buffer.from('x'), { fin: false }), 1002],
    ];
    for (const [name, bytes, code] of cases) {
      const r = await rawExchange(t.node.port, Buffer.concat([Buffer.from(UPGRADE), bytes]), 3000);
      expect(r.text, name).toContain('101 Switching Protocols');
      const close = closeOf(r.text);
      expect(close?.code, name).toBe(code);
      expect(close!.reason.length, name).toBeGreaterThan(0);
      expect(r.closed, name).toBe(true);
    }
    expect((await rpc(t.node.url, 'eth_chainId')).result).toBe('0x7a69');
  });

  it('a WebSocket client subscribes and is notified', async () => {
    const ws = await RawWs.open(t.node.wsUrl);
    try {
      const sub = (await ws.request('eth_subscribe', ['newHeads'])).result as string;
      const head = await ws.waitFor(sub);
      expect(head.number).toMatch(/^0x/);
      expect(
        await ws.batch([
          ['eth_chainId', []],
          ['eth_blockNumber', []],
        ]),
      ).toHaveLength(2);
    } finally {
      await ws.close();
    }
  });
});

describe('the uWebSockets.js guard on every event loop (--threads 2)', () => {
  let node: NodeProcess | undefined;
  afterAll(() => node?.kill());

  it('answers HTTP/1.0 and refuses unknown verbs on every connection', async () => {
    node = await spawnNode(['--ephemeral', '--threads', '2']);
    // The kernel spreads connections over both loops' listen sockets (SO_REUSEPORT).
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) => rawExchange(node!.port, i % 2 === 0 ? 'GET /health HTTP/1.0\r\n\r\n' : 'BREW / HTTP/1.1\r\nHost: x\r\n\r\n', 3000)),
    );
    answers.forEach((r, i) => {
      expect(parseResponse(r.text).status, `request ${i}`).toBe(i % 2 === 0 ? 200 : 405);
      expect(r.closed).toBe(true);
    });
    expect(node.output()).not.toContain('go unanswered');
  });
});
