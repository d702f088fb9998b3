import { ProtocolError } from '../errors.ts';

/** An anchor, request or duplicity proof that is malformed or does not verify. */
export class AnchorError extends ProtocolError {}
