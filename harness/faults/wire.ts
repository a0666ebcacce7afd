/**
 * Just enough of the PostgreSQL frontend/backend protocol (v3) for the link
 * proxy to see where one message ends and which statement a transaction ran:
 * framing (1-byte type, int32 length that counts itself, body), the untyped
 * startup-phase messages (StartupMessage, SSLRequest, GSSENCRequest,
 * CancelRequest: int32 length, int32 code), and the single-byte answer a
 * server gives an SSLRequest or GSSENCRequest. Pure: no sockets, no clock.
 */

/** The request codes of the untyped startup messages that are answered by one raw byte ('S' or 'N'). */
const ENCRYPTION_REQUESTS = new Set([80877103 /* SSLRequest */, 80877104 /* GSSENCRequest */]);

/** One whole protocol message: `type` is '' for an untyped startup-phase message, or '#raw' for a server's one-byte answer. */
export interface WireMessage {
  type: string;
  /** The whole message as it travels (type byte and length included). */
  bytes: Buffer;
  /** The body after the type byte and length. */
  body: Buffer;
}

/**
 * Splits one direction of a connection into whole messages. The client side
 * starts in the startup phase (untyped messages) and leaves it after the
 * StartupMessage; the server side answers an encryption request with one raw
 * byte, which its framer is told to expect (`expectRawByte`).
 */
export class WireFramer {
  private pending: Buffer = Buffer.alloc(0);
  private untyped: boolean;
  private rawBytes = 0;

  constructor(side: 'client' | 'server', private readonly onEncryptionRequest?: () => void) {
    this.untyped = side === 'client';
  }

  /** The server is about to answer an encryption request with one byte. */
  expectRawByte(): void {
    this.rawBytes++;
  }

  /** Feeds a chunk; returns the whole messages it completed, in order. */
  feed(chunk: Buffer): WireMessage[] {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    const out: WireMessage[] = [];
    let at = 0;
    for (;;) {
      const left = this.pending.length - at;
      if (this.rawBytes > 0) {
        if (left < 1) break;
        this.rawBytes--;
        const bytes = this.pending.subarray(at, at + 1);
        out.push({ type: '#raw', bytes, body: bytes });
        at += 1;
        continue;
      }
      if (this.untyped) {
        if (left < 8) break;
        const len = this.pending.readInt32BE(at);
        if (left < len) break;
        const bytes = this.pending.subarray(at, at + len);
        const code = bytes.readInt32BE(4);
        out.push({ type: '', bytes, body: bytes.subarray(4) });
        at += len;
        if (ENCRYPTION_REQUESTS.has(code)) this.onEncryptionRequest?.();
        // Only the StartupMessage (protocol 3.x: code 196608 and up) ends the untyped phase; a CancelRequest ends the connection.
        else this.untyped = false;
        continue;
      }
      if (left < 5) break;
      const len = this.pending.readInt32BE(at + 1);
      if (left < len + 1) break;
      const bytes = this.pending.subarray(at, at + 1 + len);
      out.push({ type: String.fromCharCode(bytes[0]), bytes, body: bytes.subarray(5) });
      at += 1 + len;
    }
    this.pending = at === 0 ? this.pending : Buffer.from(this.pending.subarray(at));
    return out;
  }
}

/** A NUL-terminated string at `at`, and where the next field starts. */
export function cstring(buf: Buffer, at: number): { value: string; next: number } {
  const end = buf.indexOf(0, at);
  const stop = end < 0 ? buf.length : end;
  return { value: buf.toString('utf8', at, stop), next: stop + 1 };
}

/** A Bind message's statement name and its parameters as text (null for a NULL or a binary-format value). */
export function parseBind(body: Buffer): { statement: string; params: (string | null)[] } {
  const portal = cstring(body, 0);
  const statement = cstring(body, portal.next);
  let at = statement.next;
  const nFormats = body.readInt16BE(at);
  at += 2;
  const formats: number[] = [];
  for (let i = 0; i < nFormats; i++, at += 2) formats.push(body.readInt16BE(at));
  const nParams = body.readInt16BE(at);
  at += 2;
  const params: (string | null)[] = [];
  for (let i = 0; i < nParams; i++) {
    const len = body.readInt32BE(at);
    at += 4;
    const format = nFormats === 0 ? 0 : nFormats === 1 ? formats[0] : formats[i];
    if (len < 0) params.push(null);
    else params.push(format === 0 ? body.toString('utf8', at, at + len) : null);
    at += Math.max(0, len);
  }
  return { statement: statement.value, params };
}

/** The first column of a DataRow, as text; null when NULL. */
export function firstColumn(body: Buffer): string | null {
  if (body.readInt16BE(0) < 1) return null;
  const len = body.readInt32BE(2);
  return len < 0 ? null : body.toString('utf8', 6, 6 + len);
}
