// RFC 6455 checks of the frames a client sends, for the HTTP front (front.ts): the bundled
// uWebSockets.js drops the TCP connection on a protocol error or an oversized message
// without a close frame (clients see 1006), and never answers an unmasked frame. The front
// checks each frame before passing it on, and on a violation closes with the status code
// and a reason itself.

import { isUtf8 } from 'node:buffer';

export const CLOSE_PROTOCOL_ERROR = 1002;
export const CLOSE_INVALID_DATA = 1007;
export const CLOSE_TOO_BIG = 1009;

export interface Violation {
  code: number;
  reason: string;
}

/** A close frame from the server (unmasked): code and reason (at most 123 bytes). */
export function closeFrame(v: Violation): Buffer {
  const reason = Buffer.from(v.reason, 'utf8').subarray(0, 123);
  const frame = Buffer.alloc(4 + reason.length);
  frame[0] = 0x88;
  frame[1] = 2 + reason.length;
  frame.writeUInt16BE(v.code, 2);
  reason.copy(frame, 4);
  return frame;
}

/**
 * Splits the client's byte stream into frames and checks them. `push` takes what arrived
 * and returns the bytes to pass on (whole, checked frames), or the violation.
 */
export class FrameChecker {
  private pending: Buffer = Buffer.alloc(0);
  /** A fragmented message is open: its opcode (1 text, 2 binary), or 0. */
  private open = 0;
  private messageBytes = 0;
  /** The unmasked fragments of an open text message, to check its UTF-8 at the end. */
  private text: Buffer[] = [];

  constructor(private readonly maxMessageBytes: number) {}

  push(chunk: Buffer): Buffer | Violation {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    let at = 0;
    for (;;) {
      const frame = this.frame(at);
      if (frame === null) break;
      if ('code' in frame) return frame;
      at = frame.end;
    }
    const out = this.pending.subarray(0, at);
    this.pending = this.pending.subarray(at);
    return out;
  }

  /** The frame starting at `at`: its end once whole and valid, null while incomplete. */
  private frame(at: number): { end: number } | Violation | null {
    const b = this.pending;
    if (b.length - at < 2) return null;
    const fin = (b[at]! & 0x80) !== 0;
    const rsv = b[at]! & 0x70;
    const opcode = b[at]! & 0x0f;
    const masked = (b[at + 1]! & 0x80) !== 0;
    let length = b[at + 1]! & 0x7f;
    let header = 2;
    if (rsv !== 0) return { code: CLOSE_PROTOCOL_ERROR, reason: 'reserved bits set without a negotiated extension' };
    const control = opcode >= 8;
    if (opcode > 10 || (opcode > 2 && opcode < 8)) return { code: CLOSE_PROTOCOL_ERROR, reason: `reserved opcode ${opcode}` };
    if (!masked) return { code: CLOSE_PROTOCOL_ERROR, reason: 'client frames must be masked' };
    if (control && (!fin || length > 125)) return { code: CLOSE_PROTOCOL_ERROR, reason: 'control frames must be whole and at most 125 bytes' };
    if (length === 126) {
      if (b.length - at < 4) return null;
      length = b.readUInt16BE(at + 2);
      header = 4;
    } else if (length === 127) {
      if (b.length - at < 10) return null;
      const big = b.readBigUInt64BE(at + 2);
      if (big > BigInt(this.maxMessageBytes)) return this.tooBig(big);
      length = Number(big);
      header = 10;
    }
    if (!control) {
      if (opcode === 0 && this.open === 0) return { code: CLOSE_PROTOCOL_ERROR, reason: 'continuation frame without a message to continue' };
      if (opcode !== 0 && this.open !== 0) return { code: CLOSE_PROTOCOL_ERROR, reason: 'new message before the previous one ended' };
      if (this.messageBytes + length > this.maxMessageBytes) return this.tooBig(BigInt(this.messageBytes + length));
    }
    const end = at + header + 4 + length;
    if (b.length < end) return null;
    if (control) return { end };
    const kind = opcode === 0 ? this.open : opcode;
    if (kind === 1) {
      const mask = b.subarray(at + header, at + header + 4);
      const payload = Buffer.from(b.subarray(at + header + 4, end));
      for (let i = 0; i < payload.length; i++) payload[i]! ^= mask[i & 3]!;
      this.text.push(payload);
    }
    this.messageBytes += length;
    if (!fin) {
      this.open = kind;
      return { end };
    }
    const text = kind === 1 ? Buffer.concat(this.text) : undefined;
    this.open = 0;
    this.messageBytes = 0;
    this.text = [];
    if (text !== undefined && !isUtf8(text)) return { code: CLOSE_INVALID_DATA, reason: 'text message is not valid UTF-8' };
    return { end };
  }

  private tooBig(size: bigint): Violation {
    return { code: CLOSE_TOO_BIG, reason: `message of ${size} bytes exceeds the limit of ${this.maxMessageBytes} bytes` };
  }
}
