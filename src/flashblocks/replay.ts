// The open block's flashblocks so far, sent first to a client that connects mid-block: a
// follower that (re)connects can serve the block at once instead of waiting for the next
// block's index 0 (a reconnect would otherwise cost it the whole block). Kept from the
// payload's index 0 until the block is sealed; a block whose messages outgrow the bound is
// not replayed (its clients wait for the next one, as without replay).

/** The most a block's messages may hold for replay (plain JSON, UTF-16 length). */
const MAX_REPLAY_CHARS = 32 * 1024 * 1024;

/** `{"payload_id":"0x…","index":N,…}`: the renderer writes these two fields first. */
const INDEX = /^\{"payload_id":"0x[0-9a-f]{16}","index":(\d+),/;
/** The first `block_number` of an index-0 message is its base's. */
const BASE_NUMBER = /"block_number":"(0x[0-9a-f]+)"/;
/** A head event's number (it comes before the transaction hashes). */
const HEAD_NUMBER = /"number":"(0x[0-9a-f]+)"/;

export class BlockSoFar {
  private messages: string[] = [];
  /** Brotli frames of `messages`, made once when a compressed client first needs them. */
  private frames: Buffer[] = [];
  private chars = 0;
  /** The block the messages are of; `undefined`: nothing to replay. */
  private number: bigint | undefined;

  /** A message as published: index 0 (a new payload) starts the record over. */
  published(message: string, frame?: Buffer): void {
    const index = INDEX.exec(message.slice(0, 64))?.[1];
    if (index === '0') {
      const base = BASE_NUMBER.exec(message)?.[1];
      this.clear();
      if (base === undefined) return;
      this.number = BigInt(base);
    } else if (this.number === undefined || index === undefined) {
      return;
    }
    this.chars += message.length;
    if (this.chars > MAX_REPLAY_CHARS) return this.clear();
    this.messages.push(message);
    if (frame !== undefined && this.frames.length === this.messages.length - 1) this.frames.push(frame);
  }

  /** A sealed block's `head` event (`{"hash","number","txHashes"}`): the open block's
   *  messages are no longer replayed once it is sealed. */
  sealedFrom(head: string): void {
    const number = HEAD_NUMBER.exec(head.slice(0, 256))?.[1];
    if (number !== undefined && this.number !== undefined && BigInt(number) >= this.number) this.clear();
  }

  /** What a new client is sent first, in its encoding. */
  replay(brotli: boolean, compress: (message: string) => Buffer): readonly (string | Buffer)[] {
    if (!brotli) return this.messages;
    for (let i = this.frames.length; i < this.messages.length; i++) this.frames.push(compress(this.messages[i]!));
    return this.frames;
  }

  private clear(): void {
    this.messages = [];
    this.frames = [];
    this.chars = 0;
    this.number = undefined;
  }
}
