// The Engine API's authentication (execution-apis, authentication.md): every request carries
// `Authorization: Bearer <JWT>`, HS256 over the shared 32-byte secret, whose `iat` is within
// 60 seconds of this node's clock. The secret file is created (32 random bytes, hex) when
// missing, as geth and reth do, so op-node can be pointed at the same file.

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** How far `iat` may be from now, either way (the spec's ±60 s). */
export const IAT_WINDOW_SECONDS = 60;

/** Reads the secret (hex, optional 0x, surrounding whitespace ignored), creating the file with
 *  a fresh one when it does not exist. Throws when the file holds anything but 32 bytes of hex. */
export function loadOrCreateSecret(path: string): Buffer {
  if (!existsSync(path)) {
    mkdirSync(dirname(path), { recursive: true });
    const secret = randomBytes(32);
    writeFileSync(path, secret.toString('hex'), { mode: 0o600 });
    return secret;
  }
  const text = readFileSync(path, 'utf8').trim().replace(/^0x/, '');
  if (!/^[0-9a-fA-F]{64}$/.test(text)) throw new Error(`--authrpc.jwtsecret ${path}: expected 32 bytes of hex, got ${text.length} characters`);
  return Buffer.from(text, 'hex');
}

const base64url = (b: Buffer): string => b.toString('base64url');

/** A token for `secret` issued at `iat` (seconds): what op-node sends; the tests use it. */
export function signToken(secret: Buffer, iat: number, claims: Record<string, unknown> = {}): string {
  const head = base64url(Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })));
  const body = base64url(Buffer.from(JSON.stringify({ iat, ...claims })));
  const sig = base64url(createHmac('sha256', secret).update(`${head}.${body}`).digest());
  return `${head}.${body}.${sig}`;
}

function parseJson(part: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Why the `Authorization` header does not authenticate, or null when it does. */
export function checkAuthorization(header: string, secret: Buffer, nowSeconds = Date.now() / 1000): string | null {
  if (header === '') return 'missing token';
  const m = /^Bearer\s+(\S+)$/i.exec(header);
  if (m === null) return 'expected "Authorization: Bearer <token>"';
  const parts = m[1]!.split('.');
  if (parts.length !== 3) return 'malformed token';
  const [head, body, sig] = parts as [string, string, string];
  const header_ = parseJson(head);
  if (header_ === null || header_.alg !== 'HS256') return 'token must be signed with HS256';
  const want = createHmac('sha256', secret).update(`${head}.${body}`).digest();
  const got = Buffer.from(sig, 'base64url');
  if (got.length !== want.length || !timingSafeEqual(got, want)) return 'signature invalid';
  const claims = parseJson(body);
  const iat = claims?.iat;
  if (typeof iat !== 'number' || !Number.isFinite(iat)) return 'missing issued-at';
  if (Math.abs(nowSeconds - iat) > IAT_WINDOW_SECONDS) return 'stale token';
  return null;
}
