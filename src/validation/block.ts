// Block parameters: tags, numbers, hashes and EIP-1898 objects, reduced to the canonical
// selector string the addon takes: a tag, a 0x block number, or a 0x block hash. Numbers
// stay strings end to end: a JavaScript number would lose precision above 2^53.

import { argPath, fail, hash32, isObject, quantity64 } from './primitives.js';

const TAGS = new Set(['latest', 'pending', 'safe', 'finalized', 'earliest']);

export function blockSelector(v: unknown, index: number, fallback?: string): string {
  const path = argPath(index);
  if (v === undefined || v === null) {
    if (fallback !== undefined) return fallback;
    throw fail(path, 'missing required block parameter (a block number, tag or block hash)');
  }
  if (typeof v === 'string') {
    if (TAGS.has(v)) return v;
    if (v.length === 66 && v.startsWith('0x')) return hash32(v, path, 'block hash');
    if (v.startsWith('0x')) return quantity64(v, path, 'block number');
    throw fail(path, `unknown block tag ${JSON.stringify(v)} (want latest, pending, safe, finalized, earliest, a hex number or a block hash)`);
  }
  if (isObject(v)) {
    const hasHash = 'blockHash' in v;
    const hasNumber = 'blockNumber' in v;
    for (const key of Object.keys(v)) {
      if (key !== 'blockHash' && key !== 'blockNumber' && key !== 'requireCanonical') {
        throw fail(path, `unknown field ${JSON.stringify(key)} in block parameter`);
      }
    }
    if (hasHash && hasNumber) throw fail(path, 'cannot specify both blockHash and blockNumber, choose one or the other');
    if ('requireCanonical' in v && typeof v.requireCanonical !== 'boolean') {
      throw fail(path, 'requireCanonical must be true or false');
    }
    // Every stored block is canonical (one sequencer, no reorgs), so requireCanonical holds.
    if (hasHash) return hash32(v.blockHash, path, 'blockHash');
    if (hasNumber) return blockSelector(v.blockNumber, index);
    throw fail(path, 'block parameter object needs blockHash or blockNumber');
  }
  throw fail(path, `block parameter must be a string or an object, got ${JSON.stringify(v)}`);
}
