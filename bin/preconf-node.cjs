#!/usr/bin/env node
// The `preconf-node` command. CommonJS so that it runs before anything could start libuv's
// pool; the ES module entry does the work.
import('../dist/main.js');
