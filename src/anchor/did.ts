/**
 * KERI identifiers as the anchor role uses them: `did:keri:<prefix>` with the `did:keri:` part
 * optional on input. The prefix is CESR text (base64url alphabet), 1–256 characters.
 */
import { AnchorError } from './errors.ts';

const PREFIX_RE = /^[A-Za-z0-9_-]{1,256}$/;
const DID_KERI = 'did:keri:';

/** Normalise to `did:keri:<prefix>`; throws AnchorError `invalid_identifier`. */
export function normalizeKeriId(id: string): string {
  const prefix = id.startsWith(DID_KERI) ? id.slice(DID_KERI.length) : id;
  if (!PREFIX_RE.test(prefix)) throw new AnchorError('invalid_identifier', `not a KERI identifier: ${JSON.stringify(id.slice(0, 80))}`);
  return DID_KERI + prefix;
}

export function isKeriId(id: string): boolean {
  try {
    normalizeKeriId(id);
    return true;
  } catch {
    return false;
  }
}
