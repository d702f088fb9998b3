/** Errors of the Merkle tree and tlog-tiles code, one class and one code union per kind of failure. */
import { CodedError } from '../errors.ts';

/** Thrown by the `check…` proof variants only (the others return a boolean). */
export type ProofErrorCode = 'inclusion_proof_invalid' | 'consistency_proof_invalid';

/** A caller passed arguments outside the tree, or a hash reader misbehaved. */
export type TreeErrorCode = 'tree_size_invalid' | 'index_out_of_range' | 'hash_invalid';

/** Tile paths, tile contents, entry bundles. */
export type TileErrorCode = 'tile_path_invalid' | 'tile_invalid' | 'entry_bundle_invalid' | 'entry_too_large';

/** An inclusion or consistency proof failed verification. */
export class ProofError extends CodedError<ProofErrorCode> {}

/** A tree size, index or subtree hash is out of range or malformed. */
export class TreeError extends CodedError<TreeErrorCode> {}

/** A tile path, tile or entry bundle is malformed. */
export class TileError extends CodedError<TileErrorCode> {}
