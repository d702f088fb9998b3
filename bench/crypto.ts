/**
 * The crypto ceiling: Ed25519 sign/verify (the strict verifier the product uses), P-256 verify,
 * SHA-256 of a Merkle node, and proof generation/verification rates. Later benchmarks compare
 * against these numbers measured in the same run.
 */
import { randomBytes } from 'node:crypto';
import { generateEd25519, signEd25519, verifyEd25519 } from '../src/crypto/ed25519.ts';
import { generateP256, signP256, verifyP256 } from '../src/crypto/p256.ts';
import { hashChildren, hashLeaf } from '../src/tlog/hash.ts';
import { inclusionProof, memoryHashReader, treeRoot, verifyInclusion, consistencyProof, verifyConsistency } from '../src/tlog/merkle.ts';
import { rate } from './_measure.ts';

const msg = randomBytes(193);
const ed = generateEd25519();
const edSig = signEd25519(ed.privateKey, msg);
const p = generateP256();
const pSig = signP256(p.privateKey, msg);
const a = randomBytes(32);
const b = randomBytes(32);

const N = 1 << 16;
const leaves = Array.from({ length: N }, (_, i) => hashLeaf(Buffer.from(`leaf ${i}`)));
const read = memoryHashReader(leaves);
const root = treeRoot(N, read);
let idx = 0;
const proof = inclusionProof(12345, N, read);
const cproof = consistencyProof(40000, N, read);
const oldRoot = treeRoot(40000, read);

const result = {
  bench: 'crypto',
  node: process.version,
  ed25519_sign: rate(() => signEd25519(ed.privateKey, msg)),
  ed25519_verify_strict: rate(() => {
    if (!verifyEd25519(ed.publicKey, msg, edSig)) throw new Error('verify failed');
  }),
  p256_verify: rate(() => {
    if (!verifyP256(p.publicKey, msg, pSig)) throw new Error('verify failed');
  }),
  sha256_node_65B: rate(() => hashChildren(a, b), 1, 1000),
  inclusion_proof_generate_65536: rate(() => inclusionProof(idx++ % N, N, read)),
  inclusion_proof_verify_65536: rate(() => {
    if (!verifyInclusion(leaves[12345]!, 12345, N, proof, root)) throw new Error('bad proof');
  }),
  consistency_proof_generate_40000_65536: rate(() => consistencyProof(40000, N, read)),
  consistency_proof_verify_40000_65536: rate(() => {
    if (!verifyConsistency(40000, N, oldRoot, root, cproof)) throw new Error('bad proof');
  }),
};
const ceiling = 1 / (1 / result.ed25519_verify_strict.ops_per_s + 1 / result.ed25519_sign.ops_per_s);
process.stdout.write(JSON.stringify({ ...result, anchor_crypto_ceiling_per_s: Math.round(ceiling) }, null, 2) + '\n');
