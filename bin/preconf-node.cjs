#!/usr/bin/env node
// libuv's pool runs eth_call, simulation, log queries and journaled submissions; the default
// 4 threads would let four slow calls hold up every transaction submission. CommonJS, so
// nothing has started the pool before this line (an ES module entry is loaded through it).
process.env.UV_THREADPOOL_SIZE ??= '16';
import('../dist/main.js');
