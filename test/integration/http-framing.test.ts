// HTTP as proxies and hostile clients speak it (request smuggling must not get through):
// conflicting framing headers are refused with 400; HEAD is answered as GET without a body
// (HEAD / as HEAD /health); other verbs get 405 with Allow. (HTTP/1.0 and what uWS itself
// would drop: http-guard.test.ts.)

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { parseResponse, rawExchange } from '../helpers/raw-http.js';

const CHAIN_ID = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}';

describe('HTTP framing and verbs', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode();
  });
  afterAll(() => t?.stop());

  it('two Content-Length headers, or Transfer-Encoding beside one, answer 400 and close the connection', async () => {
    const smuggled = '{"jsonrpc":"2.0","id":2,"method":"eth_chainId"}';
    // As a connection's first request, the uWebSockets.js guard refuses it before uWS reads it.
    const te = await rawExchange(
      t.node.port,
      `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nContent-Length: ${CHAIN_ID.length}\r\n\r\n${CHAIN_ID}${smuggled}`,
    );
    expect(parseResponse(te.text).status).toBe(400);
    expect(te.text).not.toContain('0x7a69');
    expect(te.closed).toBe(true);
    for (const headers of [
      `Content-Length: ${CHAIN_ID.length}\r\nContent-Length: ${CHAIN_ID.length + smuggled.length}\r\n`,
      `Content-Length: ${CHAIN_ID.length}\r\nContent-Length: ${CHAIN_ID.length}\r\n`,
    ]) {
      const r = await rawExchange(t.node.port, `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${headers}\r\n${CHAIN_ID}${smuggled}`);
      const res = parseResponse(r.text);
      expect(res.status, headers).toBe(400);
      expect(JSON.parse(res.body).error.code).toBe(-32600);
      // Nothing after the refusal: the second request was never read as one.
      expect(r.text.match(/HTTP\/1\.1/g)).toHaveLength(1);
      expect(r.closed).toBe(true);
    }
    const ok = await rawExchange(
      t.node.port,
      `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${CHAIN_ID.length}\r\n\r\n${CHAIN_ID}`,
      300,
    );
    expect(JSON.parse(parseResponse(ok.text).body).result).toBe('0x7a69');
  });

  it('HEAD is answered as GET without a body, and the connection stays usable', async () => {
    const r = await rawExchange(
      t.node.port,
      'HEAD /health HTTP/1.1\r\nHost: x\r\n\r\nHEAD / HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n',
      500,
    );
    const [health, root, get] = r.text.split(/(?=HTTP\/1\.1 )/);
    const h = parseResponse(health!);
    expect(h.status).toBe(200);
    expect(h.headers['content-type']).toBe('application/json');
    expect(health!.endsWith('\r\n\r\n')).toBe(true);
    expect(parseResponse(root!).status).toBe(200);
    expect(root!.endsWith('\r\n\r\n')).toBe(true);
    expect(JSON.parse(parseResponse(get!).body).status).toBe('ok');
  });

  // A verb uWS does not parse (BREW): http-guard.test.ts.
  it('PUT, DELETE, PATCH and TRACE answer 405 with Allow', async () => {
    for (const verb of ['PUT', 'DELETE', 'PATCH', 'TRACE']) {
      const r = await rawExchange(t.node.port, `${verb} / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n`, 300);
      const res = parseResponse(r.text);
      expect(res.status, verb).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD, POST, OPTIONS');
      expect(JSON.parse(res.body).error.code).toBe(-32600);
    }
    const options = parseResponse((await rawExchange(t.node.port, 'OPTIONS / HTTP/1.1\r\nHost: x\r\n\r\n', 300)).text);
    expect(options.status).toBe(204);
    expect(options.headers.allow).toBe('GET, HEAD, POST, OPTIONS');
  });
});
