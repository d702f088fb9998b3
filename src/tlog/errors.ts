/**
 * Errors of the Merkle tree and tlog-tiles code. Codes are stable (snake_case):
 *
 * ProofError (a proof does not verify; thrown by the `check…` variants only):
 *   inclusion_proof_invalid, consistency_proof_invalid
 * TreeError (a caller passed arguments outside the tree, or a hash reader misbehaved):
 *   tree_size_invalid, index_out_of_range, hash_invalid
 * TileError (tile paths, tile contents, entry bundles):
 *   tile_path_invalid, tile_invalid, entry_bundle_invalid, entry_too_large
 */
import { ProtocolError } from '../errors.ts';

/** An inclusion or consistency proof failed verification. */
export class ProofError extends ProtocolError {}

/** A tree size, index or subtree hash is out of range or malformed. */
export class TreeError extends ProtocolError {}

/** A tile path, tile or entry bundle is malformed. */
export class TileError extends ProtocolError {}
