// A loopback proxy in front of a fork's upstream, run as its own process (a forked node
// blocks its thread on upstream reads, so the proxy must not share its event loop).
// Counts the requests and JSON-RPC calls it forwards, and can delay, stall, answer 429
// or drop them, or answer some methods "does not exist" itself (`hide`, as an upstream that
// predates them). Control: POST /__control {mode, delayMs, fail, hide}, GET /__stats, POST /__reset.
// It takes JSON-RPC over HTTP (POST /) and over WebSocket (ws://…/): a message is a
// request as a POST is, answered on its socket; it forwards both to the upstream over HTTP.
//
//   node upstream-proxy.mjs UPSTREAM_URL [DELAY_MS] [PORT]   (prints "listening PORT")

import { createServer } from 'node:http';
import { WebSocketServer } from 'ws';

const upstream = process.argv[2];
let mode = 'pass'; // pass | stall | 429 | drop
let delayMs = Number(process.argv[3] ?? 0);
const port = Number(process.argv[4] ?? 0);
let fail = 0; // answer the next N requests with 429, then pass
let hide = []; // methods answered with -32601
let stats = { requests: 0, calls: 0, methods: {} };

/** Counts a request and says what to do with it: 'stall', 'drop', '429', or the answer. */
async function handle(body) {
  stats.requests += 1;
  let parsed;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = [];
  }
  for (const call of Array.isArray(parsed) ? parsed : [parsed]) {
    stats.calls += 1;
    stats.methods[call.method] = (stats.methods[call.method] ?? 0) + 1;
  }
  if (mode === 'stall' || mode === 'drop') return { action: mode };
  if (mode === '429' || fail > 0) {
    if (fail > 0) fail -= 1;
    return { action: '429' };
  }
  if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
  try {
    const hidden = Array.isArray(parsed) ? parsed.filter((c) => hide.includes(c.method)) : [];
    if (hidden.length > 0) {
      const rest = parsed.filter((c) => !hide.includes(c.method));
      const answered =
        rest.length === 0
          ? []
          : await (await fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(rest) })).json();
      const refused = hidden.map((c) => ({
        jsonrpc: '2.0',
        id: c.id,
        error: { code: -32601, message: `the method ${c.method} does not exist/is not available` },
      }));
      return { status: 200, text: JSON.stringify([...answered, ...refused]) };
    }
    const answer = await fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return { status: answer.status, text: await answer.text() };
  } catch (e) {
    return { status: 502, text: String(e) };
  }
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    const body = Buffer.concat(chunks).toString();
    if (req.url === '/__stats') return void res.end(JSON.stringify(stats));
    if (req.url === '/__reset') {
      stats = { requests: 0, calls: 0, methods: {} };
      return void res.end('{}');
    }
    if (req.url === '/__control') {
      const c = JSON.parse(body);
      mode = c.mode ?? mode;
      delayMs = c.delayMs ?? delayMs;
      fail = c.fail ?? fail;
      hide = c.hide ?? hide;
      return void res.end('{}');
    }
    const r = await handle(body);
    if (r.action === 'stall') return; // never answers
    if (r.action === 'drop') return void req.socket.destroy();
    if (r.action === '429') {
      res.writeHead(429, { 'content-type': 'text/plain' });
      return void res.end('Too Many Requests');
    }
    res.writeHead(r.status, { 'content-type': 'application/json' });
    res.end(r.text);
  });
});

// Over WebSocket there is no status: a provider says 429 as a JSON-RPC error.
new WebSocketServer({ server }).on('connection', (socket) => {
  socket.on('message', async (data) => {
    const r = await handle(data.toString());
    if (r.action === 'stall') return;
    if (r.action === 'drop') return void socket.terminate();
    if (r.action === '429') return void socket.send(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: 429, message: 'Too Many Requests' } }));
    socket.send(r.text);
  });
});

server.listen(port, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
