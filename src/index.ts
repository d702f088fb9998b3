/**
 * The package's importable surface: the client SDK (party signing, submission, offline
 * verification, finalization, monitoring). It pulls in no server, store or HTTP-layer code.
 */
export * from './client/index.ts';
