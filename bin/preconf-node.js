#!/usr/bin/env node
// libuv's pool runs eth_call, simulation, log queries and journaled submissions; the default
// 4 threads would let four slow calls hold up every transaction submission. Set before
// anything starts the pool.
process.env.UV_THREADPOOL_SIZE ??= '16';
await import('../dist/main.js');
