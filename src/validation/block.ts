// Block parameters: tags, numbers, hashes and EIP-1898 objects, reduced to the canonical
// selector string the addon takes: a tag, a 0x block number, or a 0x block hash. Numbers
// stay strings end to end: a JavaScript number would lose precision above 2^53.

import { argPath, fail, hash32, isObject, quantity64, show, type Path } from './primitives.js';

const TAGS = new Set(['latest', 'pending', 'safe', 'finalized', 'earliest']);

/** geth keeps block numbers in an int64 and refuses larger ones as invalid params. With
 *  no leading zeros, 16 hex digits starting above 7 are exactly the values past 2^63-1. */
function blockNumber(v: string, path: Path): string {
  const q = quantity64(v, path, 'block number');
  if (q.length === 18 && q[2]! > '7') throw fail(path, `block number larger than int64: ${show(v)}`);
  return q;
}

/** A block number or a tag, not a hash: an EIP-1898 object's blockNumber, a log filter's
 *  fromBlock and toBlock (geth's rpc.BlockNumber). */
export function blockNumberOrTag(v: unknown, path: Path): string {
  if (typeof v === 'string' && TAGS.has(v)) return v;
  if (typeof v === 'string' && v.startsWith('0x')) return blockNumber(v, path);
  throw fail(path, `block number or tag expected (latest, pending, safe, finalized, earliest or a hex number), got ${show(v)}`);
}

/** The block parameter at position `index` of the request (geth's BlockNumberOrHash). */
export function blockSelector(v: unknown, index: number, fallback?: string): string {
  const path = argPath(index);
  if (v === undefined || v === null) {
    if (fallback !== undefined) return fallback;
    throw fail(path, 'missing required block parameter (a block number, tag or block hash)');
  }
  if (typeof v === 'string') {
    if (TAGS.has(v)) return v;
    if (v.length === 66 && v.startsWith('0x')) return hash32(v, path, 'block hash');
    if (v.startsWith('0x')) return blockNumber(v, path);
    throw fail(path, `unknown block tag ${show(v)} (want latest, pending, safe, finalized, earliest, a hex number or a block hash)`);
  }
  if (isObject(v)) {
    const hasHash = 'blockHash' in v;
    const hasNumber = 'blockNumber' in v;
    for (const key of Object.keys(v)) {
      if (key !== 'blockHash' && key !== 'blockNumber' && key !== 'requireCanonical') {
        throw fail(path, `unknown field ${show(key)} in block parameter`);
      }
    }
    if (hasHash && hasNumber) throw fail(path, 'cannot specify both blockHash and blockNumber, choose one or the other');
    if ('requireCanonical' in v && typeof v.requireCanonical !== 'boolean') {
      throw fail(path, 'requireCanonical must be true or false');
    }
    // Every stored block is canonical (one sequencer, no reorgs), so requireCanonical holds.
    if (hasHash) return hash32(v.blockHash, path, 'blockHash');
    if (hasNumber) return blockNumberOrTag(v.blockNumber, `${path}.blockNumber`);
    throw fail(path, 'block parameter object needs blockHash or blockNumber');
  }
  throw fail(path, `block parameter must be a string or an object, got ${show(v)}`);
}
