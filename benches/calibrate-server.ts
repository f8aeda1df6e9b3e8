// Calibration target: the smallest possible uWebSockets.js JSON-RPC responder. Every POST
// gets the same tiny JSON-RPC result, so its req/s is the ceiling the load generator and
// uWS reach together on this machine; a scenario near that number is measuring the harness.
//
//   node --import tsx benches/calibrate-server.ts PORT

// The build the node itself would pick here (scripts/uws-builds.mjs), so both compare alike.
import uWS from '../src/transport/uws.js';

const ANSWER = '{"jsonrpc":"2.0","id":1,"result":"0x0"}';
const port = Number(process.argv[2] ?? '0');

uWS
  .App()
  .post('/*', (res) => {
    res.onAborted(() => {});
    // Consume the body (a real server must read it) and answer when it is complete.
    res.onData((_chunk, isLast) => {
      if (isLast) res.cork(() => res.writeHeader('Content-Type', 'application/json').end(ANSWER));
    });
  })
  .listen('127.0.0.1', port, (token) => {
    if (!token) {
      console.error(`cannot listen on 127.0.0.1:${port}`);
      process.exit(1);
    }
    console.log(`Listening on http://127.0.0.1:${uWS.us_socket_local_port(token)}`);
  });
