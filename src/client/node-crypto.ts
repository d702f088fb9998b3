/**
 * The node:crypto backend of the verifier core's crypto port (src/verify/crypto.ts): the
 * server's own SHA-256, Ed25519, P-256 and ML-DSA-44 (src/crypto, OpenSSL; synchronous, faster
 * than WebCrypto's key import per call). `anchor-witness/client` and the CLI install it; the
 * verifiers and their strict rules stay src/verify's — this module only binds the arithmetic.
 */
import { verifyEd25519 } from '../crypto/ed25519.ts';
import { mlDsa44Supported, verifyMlDsa44 } from '../crypto/ml-dsa.ts';
import { verifyP256 } from '../crypto/p256.ts';
import { sha256 } from '../crypto/sha256.ts';
import { setCryptoBackend, type CryptoBackend } from '../verify/crypto.ts';

/** node:crypto for every algorithm (ML-DSA-44 where this Node has it; else WebCrypto's, if any). */
export function nodeCryptoBackend(): CryptoBackend {
  return {
    sha256,
    ed25519Verify: verifyEd25519,
    p256Verify: verifyP256,
    ...(mlDsa44Supported() ? { mlDsa44Verify: verifyMlDsa44 } : {}),
  };
}

/** Install the node:crypto backend for every verifier of this process (src/verify/crypto.ts). */
export function useNodeCrypto(): void {
  setCryptoBackend(nodeCryptoBackend());
}
