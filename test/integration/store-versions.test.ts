// A store written by the previous schema (2, before bounded history) opens: it is
// migrated in place (the new table, the live-bytes count), keeps its chain and state, and the
// node goes on building on it. The fixture is a datadir written by preconf-node at d9de4fc
// (three transfers of 1 ETH to 0x…dEaD on the dev chain). A store of an unknown schema stops
// with one line naming both versions: crates/chain/tests/store.rs.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { rpc } from '../helpers/node.js';
import { spawnNode, type NodeProcess } from '../helpers/process.js';
import { scrape, valueOf } from '../helpers/prometheus.js';
import { waitFor } from '../helpers/wait.js';

const fixture = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'store-v2', 'chain.redb.gz');
const DEAD = '0x000000000000000000000000000000000000dEaD';

describe('a store of the previous schema', () => {
  const datadir = mkdtempSync(join(tmpdir(), 'preconf-store-v2-'));
  let node: NodeProcess | undefined;
  afterAll(async () => {
    await node?.kill('SIGKILL');
    rmSync(datadir, { recursive: true, force: true });
  });

  it('is migrated on open and served: same chain, same state, and the node builds on it', async () => {
    writeFileSync(join(datadir, 'chain.redb'), gunzipSync(readFileSync(fixture)));
    node = await spawnNode(['--datadir', datadir, '--block-time-ms', '200']);
    const url = node.url;
    const head = Number(BigInt((await rpc(url, 'eth_blockNumber')).result));
    expect(head).toBeGreaterThanOrEqual(30);
    expect((await rpc(url, 'eth_getBalance', [DEAD, 'latest'])).result).toBe('0x29a2241af62c0000'); // 3 ETH
    expect((await rpc(url, 'eth_getBlockByNumber', ['0x0', false])).result.hash).toBe('0x61e5b1ecc53a5c9b6fd49526a644ab03c68598a3a18706bbdddfa492f31e618e');
    // The migration counted what the store holds.
    expect(valueOf((await scrape(url)).families, 'preconf_store_live_bytes')).toBeGreaterThan(10_000);
    await waitFor(async () => Number(BigInt((await rpc(url, 'eth_blockNumber')).result)) >= head + 3, 10_000, 'three new blocks');
    expect(await node.kill('SIGTERM')).toBe(0);
    // Opened again (now schema 3): the same.
    node = await spawnNode(['--datadir', datadir]);
    expect((await rpc(node.url, 'eth_getBalance', [DEAD, 'latest'])).result).toBe('0x29a2241af62c0000');
  }, 60_000);
});
