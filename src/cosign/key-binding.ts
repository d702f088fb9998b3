/**
 * An origin's stored state is bound to the log key set it was cosigned under (SPEC §5 rev 4).
 *
 *   same      the configured set is the stored one
 *   unbound   the state predates key sets (bound now, to the configured set)
 *   update    the sets share a key (the operator's `--logs` follows a rotation), or nothing was
 *             cosigned yet: the state continues under the configured set
 *   conflict  disjoint sets while a checkpoint was cosigned: not served until
 *             `anchor-witness cosign forget ORIGIN`
 *
 * Key sets are compared as normalized vkey text (formatVkey: lowercase hex key ID), never by
 * checking keys.
 */
export type KeyBinding = 'same' | 'unbound' | 'update' | 'conflict';

/** How the `configured` key set relates to the stored one of a state (`cosigned`: not an empty state). */
export function compareKeySets(stored: readonly string[] | undefined, configured: readonly string[], cosigned: boolean): KeyBinding {
  if (stored === undefined) return 'unbound';
  const have = new Set(stored);
  if (configured.length === have.size && configured.every((k) => have.has(k))) return 'same';
  if (configured.some((k) => have.has(k))) return 'update';
  return cosigned ? 'conflict' : 'update';
}

/** A vkey's text as formatVkey writes it (the key ID in lowercase hex), without checking the key. */
export function normalizeVkeyText(vkey: string): string {
  const i1 = vkey.indexOf('+');
  const i2 = i1 < 0 ? -1 : vkey.indexOf('+', i1 + 1);
  if (i2 < 0) return vkey;
  return vkey.slice(0, i1 + 1) + vkey.slice(i1 + 1, i2).toLowerCase() + vkey.slice(i2);
}
