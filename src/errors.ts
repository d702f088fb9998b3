/**
 * Typed errors with stable codes, in the manner of panva/jose: every failure a caller may branch
 * on carries a `code` (snake_case, stable). Protocol modules throw subclasses of ProtocolError;
 * the HTTP layer maps codes to statuses.
 */
export class ProtocolError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
    this.name = new.target.name;
  }
}

/** A value could not be decoded from its wire form (hex, base64, timestamps, decimals, JSON). */
export class EncodingError extends ProtocolError {}
