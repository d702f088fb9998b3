/**
 * `npm start`: the development default. Runs the witness (roles anchor + cosign) on 127.0.0.1
 * with a data dir under .data/dev, generated keys kept there, a demo party registry, and a signed
 * demo anchor request; prints copy-paste commands. Ctrl-C stops it.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pino } from 'pino';
import { ed25519PrivateKeyFromPem, ed25519PrivateKeyToPem, ed25519PublicKeyBytes, generateEd25519 } from '../crypto/ed25519.ts';
import { encodeHex } from '../encoding/hex.ts';
import { readKeyFile, writeNewKeyFile } from '../keys/keyfile.ts';
import { deriveSeedId } from '../anchor/seed.ts';
import { startWitness, type WitnessConfig } from '../witness/node.ts';
import { startBridge } from '../bridge/node.ts';
import { writeDemo } from '../bridge/demo.ts';
import { formatCheckpoint } from '../note/checkpoint.ts';
import { signNote, SIG_TYPE_ED25519 } from '../note/signed-note.ts';
import { ed25519NoteSigner, formatVkey } from '../note/vkey.ts';
import { EMPTY_ROOT } from '../tlog/hash.ts';
import { DEFAULT_QUOTA } from '../anchor/quota-window.ts';
import { DEFAULT_KEL_LIMITS } from '../keri/index.ts';
import { demoAnchorRequest, ensureKelDemo, kelDemoRequest } from './dev-kel.ts';

const dataDir = resolve(process.env.AW_DEV_DATA_DIR ?? '.data/dev');
mkdirSync(dataDir, { recursive: true });

function keyAt(path: string) {
  if (!existsSync(path)) writeNewKeyFile(path, ed25519PrivateKeyToPem(generateEd25519().privateKey));
  return ed25519PrivateKeyFromPem(readKeyFile(path));
}

const ROOT = 'did:keri:EDemoRoot';
const AGENT = 'did:keri:EDemoAgent';
const SCOPE = 'EDemoScope';
const partyKey = keyAt(join(dataDir, 'demo-party-key.pem'));
// A second demo party whose keys come from key event logs (SPEC §3.5): a root that delegates and
// its agent, KEL files in a dir: source; `node src/cli/dev-kel.ts rotate` rotates the agent.
const kelDemo = ensureKelDemo(dataDir);
const registryFile = join(dataDir, 'registry.json');
writeFileSync(
  registryFile,
  JSON.stringify(
    {
      parties: [
        { id: AGENT, delegator: ROOT, keys: [{ curve: 'ed25519', public_key: encodeHex(ed25519PublicKeyBytes(partyKey)) }] },
        { id: kelDemo.rootId, delegates: true },
      ],
    },
    null,
    2,
  ) + '\n',
);
const kelRequestFile = join(dataDir, 'demo-kel-anchor-request.json');
writeFileSync(kelRequestFile, kelDemoRequest(kelDemo));
const kel = { source: `dir:${kelDemo.kelDir}`, pollSeconds: 30, limits: DEFAULT_KEL_LIMITS };

// A fresh anchor request each start (it co-signs on top of earlier runs).
const seedId = deriveSeedId(ROOT, AGENT, SCOPE);
const requestFile = join(dataDir, 'demo-anchor-request.json');
writeFileSync(requestFile, demoAnchorRequest(partyKey, { agent: AGENT, root: ROOT, scope: SCOPE }));

// A demo transparency log for the cosign role: its key, a logs file naming it, and an
// add-checkpoint request for its empty tree (cosignable again and again: old 0 → size 0).
const DEMO_LOG = 'log.localhost/demo';
const logKey = keyAt(join(dataDir, 'demo-log-key.pem'));
const logsFile = join(dataDir, 'logs.json');
writeFileSync(
  logsFile,
  JSON.stringify({ logs: [{ origin: DEMO_LOG, keys: [formatVkey(DEMO_LOG, SIG_TYPE_ED25519, ed25519PublicKeyBytes(logKey))] }] }, null, 2) +
    '\n',
);
const checkpointNote = signNote(formatCheckpoint({ origin: DEMO_LOG, size: 0, rootHash: EMPTY_ROOT, extensions: [] }), [
  ed25519NoteSigner(DEMO_LOG, logKey),
]);
const addCheckpointFile = join(dataDir, 'demo-add-checkpoint.txt');
writeFileSync(addCheckpointFile, `old 0\n\n${checkpointNote}`);

const log = pino({ base: { svc: 'anchor-witness' }, level: process.env.AW_LOG_LEVEL ?? 'warn' }, pino.destination(2));
const port = Number(process.env.AW_DEV_PORT ?? 8420);
const witnessConfig: WitnessConfig = {
  host: '127.0.0.1',
  port,
  dataDir,
  name: 'witness.localhost/dev',
  roles: ['anchor', 'cosign'],
  dev: true,
  allowUnderivedSeeds: false,
  quota: DEFAULT_QUOTA,
  registryFile,
  logsFile,
  kel,
};
let node;
try {
  node = await startWitness(witnessConfig, log);
} catch (e) {
  if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw e;
  node = await startWitness({ ...witnessConfig, port: 0 }, log);
}
const url = node.url;
const seed = encodeHex(seedId);

// The token bridge: persistent signing keys under the data dir, a fresh demo chain each start.
const bridgeLog = pino({ base: { svc: 'token-bridge' }, level: process.env.AW_LOG_LEVEL ?? 'warn' }, pino.destination(2));
const bridgeConfig = { host: '127.0.0.1', keyDir: join(dataDir, 'bridge-keys'), dev: true };
let bridge;
try {
  bridge = await startBridge({ ...bridgeConfig, port: Number(process.env.TB_DEV_PORT ?? 8421) }, bridgeLog);
} catch (e) {
  if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw e;
  bridge = await startBridge({ ...bridgeConfig, port: 0 }, bridgeLog);
}
const demoDir = join(dataDir, 'bridge-demo');
rmSync(demoDir, { recursive: true, force: true });
mkdirSync(demoDir, { recursive: true });
const demo = writeDemo(demoDir, bridge.url, 'sts.amazonaws.com');
process.stdout.write(`listening on ${url}
listening on ${bridge.url}

anchor-witness (development mode) — data in ${dataDir}
  witness key  ${encodeHex(node.witnessPublicKey)}
  log origin   ${node.logOrigin}
  demo party   ${AGENT} (delegated by ${ROOT}); its key: ${join(dataDir, 'demo-party-key.pem')}
  KEL party    ${kelDemo.agentId} (delegated by ${kelDemo.rootId}); keys from the KELs in ${kelDemo.kelDir}

Try it:
  # submit the signed demo anchor (a fresh one is written at every start)
  curl -sS -H 'content-type: application/json' --data-binary @${requestFile} ${url}/v1/anchor
  # read back the latest anchor this witness co-signed for the demo seed
  curl -sS ${url}/v1/anchor/${seed}
  # …and verify it offline: signed by the demo party, co-signed and logged by this witness
  curl -sS ${url}/v1/anchor/${seed} | node_modules/.bin/node bin/anchor-witness.js verify inclusion - --witness-key ${encodeHex(node.witnessPublicKey)} --party-key ${encodeHex(ed25519PublicKeyBytes(partyKey))}
  # the KEL party: its key comes from its key event log, not from the registry file
  curl -sS -H 'content-type: application/json' --data-binary @${kelRequestFile} ${url}/v1/anchor
  # rotate its key (a drt anchored by its root; files renamed into place), then submit with the new key
  cp ${kelRequestFile} ${kelRequestFile}.old && node_modules/.bin/node src/cli/dev-kel.ts rotate && sleep 2
  curl -sS -H 'content-type: application/json' --data-binary @${kelRequestFile} ${url}/v1/anchor
  # the old key is refused now (403 key_not_current), without any registry edit
  curl -sS -H 'content-type: application/json' --data-binary @${kelRequestFile}.old ${url}/v1/anchor
  # the same check offline: one JSON line per KEL
  node_modules/.bin/node bin/anchor-witness.js kel verify ${kelDemo.kelDir}
  # the witness's own transparency log
  curl -sS ${url}/log/checkpoint
  # the cosign role (C2SP tlog-witness): countersign the demo log's checkpoint
  curl -sS --data-binary @${addCheckpointFile} ${url}/add-checkpoint
  curl -sS ${url}/health
  curl -sS ${url}/openapi.json

token-bridge (development mode: http issuer ${bridge.issuer.issuer}, keys in ${bridge.keyDir})
  # exchange the demo attestation chain (root ${demo.subject}) for a JWT, with proof of possession
  ${demo.command.replace(/^node /, 'node_modules/.bin/node ')}
  curl -sS ${bridge.url}/.well-known/openid-configuration
  curl -sS ${bridge.url}/.well-known/jwks.json

Ctrl-C to stop.
`);
const stop = (): void => {
  Promise.all([node.close(), bridge.close()]).then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
