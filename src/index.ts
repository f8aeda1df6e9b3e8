// Library entry: start a node from code (tests, embedding).
export { startNode, type RunningNode } from './server.js';
export { defaultConfig, parseArgs, type Config } from './cli/index.js';
export { Chain } from './native.js';
