// The floor: the least a JSON-RPC server on uWebSockets.js must do per request. It reads the
// body, decodes and parses it (JSON.parse), and answers a fixed result with the request's id
// (each item's, for a batch) in one corked write. No validation, no method table, no chain:
// nothing on this front can be cheaper, so the node's req/s over this one's is the share of
// a request's CPU the node spends above transport, parse and write (benches/RESULTS.md).
//
//   node --import tsx benches/floor-server.ts PORT

// The build the node itself would pick here (scripts/uws-builds.mjs), so both compare alike.
import uWS from '../src/transport/uws.js';

const port = Number(process.argv[2] ?? '0');
// Status and header as bytes: uWS copies a string argument into UTF-8 on every call.
const OK = new Uint8Array(Buffer.from('200 OK'));
const CONTENT_TYPE = new Uint8Array(Buffer.from('Content-Type'));
const JSON_TYPE = new Uint8Array(Buffer.from('application/json'));

function answer(id: unknown): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id ?? null)},"result":"0x0"}`;
}

function reply(body: string): string {
  const parsed = JSON.parse(body) as unknown;
  if (Array.isArray(parsed)) return `[${parsed.map((item: { id?: unknown }) => answer(item?.id)).join(',')}]`;
  return answer((parsed as { id?: unknown }).id);
}

uWS
  .App()
  .post('/*', (res) => {
    const state = { aborted: false };
    res.onAborted(() => {
      state.aborted = true;
    });
    let chunks: Buffer[] | null = null;
    res.onData((chunk, isLast) => {
      if (isLast && chunks === null) {
        const out = reply(Buffer.from(chunk).toString('utf8'));
        if (!state.aborted) res.cork(() => res.writeStatus(OK).writeHeader(CONTENT_TYPE, JSON_TYPE).end(out));
        return;
      }
      (chunks ??= []).push(Buffer.from(new Uint8Array(chunk).slice()));
      if (isLast) {
        const out = reply(Buffer.concat(chunks).toString('utf8'));
        if (!state.aborted) res.cork(() => res.writeStatus(OK).writeHeader(CONTENT_TYPE, JSON_TYPE).end(out));
      }
    });
  })
  .listen('127.0.0.1', port, (token) => {
    if (!token) {
      console.error(`cannot listen on 127.0.0.1:${port}`);
      process.exit(1);
    }
    console.log(`Listening on http://127.0.0.1:${uWS.us_socket_local_port(token)}`);
  });
