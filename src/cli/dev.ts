/**
 * `npm start`: the development default. Runs the witness (roles anchor + cosign) on 127.0.0.1
 * with a data dir under .data/dev, generated keys kept there, a demo party registry, and a signed
 * demo anchor request; prints copy-paste commands. Ctrl-C stops it.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { ProtocolError } from '../errors.ts';
import { ed25519PrivateKeyFromPem, ed25519PrivateKeyToPem, ed25519PublicKeyBytes, generateEd25519 } from '../crypto/ed25519.ts';
import { encodeHex } from '../encoding/hex.ts';
import { readKeyFile, writeNewKeyFile } from '../keys/keyfile.ts';
import { deriveSeedId } from '../anchor/seed.ts';
import { startWitness, type WitnessConfig } from '../witness/node.ts';
import { reloadOnSighup } from './sighup.ts';
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
/** The data dir as the user would type it: relative to the working directory when inside it. */
const shownDir = ((r) => (r !== '' && !r.startsWith('..') && !isAbsolute(r) ? r : dataDir))(relative(process.cwd(), dataDir));
mkdirSync(dataDir, { recursive: true });

// The JSON log lines of the start (dev-mode notices) are held back and written to stderr after
// the banner, under a heading, so the banner on stdout reads as one block.
const held: string[] = [];
let holding = true;
const logSink = {
  write(line: string): void {
    if (holding) held.push(line);
    else process.stderr.write(line);
  },
};
function releaseLog(heading = ''): void {
  if (!holding) return;
  holding = false;
  if (held.length > 0) process.stderr.write(heading + held.join(''));
}

/** Stop with one line on stderr (no stack): what went wrong and what to do. */
function die(message: string): never {
  releaseLog();
  process.stderr.write(`npm start: ${message}\n`);
  process.exit(1);
}

// One `npm start` per data dir, checked before anything in it is rewritten: an exclusive SQLite
// lock on npm-start.lock, held while this process lives (the OS drops it when the process ends).
// Kept referenced for the life of the process (a collected handle would close and release it).
const devLock = new Database(join(dataDir, 'npm-start.lock'), { timeout: 0 });
try {
  devLock.pragma('locking_mode = EXCLUSIVE');
  devLock.exec('BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS holder (pid INTEGER); COMMIT;');
} catch (e) {
  const code = (e as { code?: string }).code ?? '';
  if (!code.startsWith('SQLITE_BUSY') && !code.startsWith('SQLITE_LOCKED')) throw e;
  die(
    `another npm start is running on ${shownDir} (stop it, or run a second one on another data dir: AW_DEV_DATA_DIR=${shownDir}-2 npm start)`,
  );
}
// A closure over the handle keeps it alive: a module-level binding that no closure captures may be
// collected once the top level has run, and a collected handle closes and drops the lock (seen once:
// a second npm start got past the lock and only met the store's own lock).
process.on('exit', () => {
  devLock.close();
});

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

const logLevel = process.env.AW_LOG_LEVEL ?? 'warn';
const log = pino({ base: { svc: 'anchor-witness' }, level: logLevel }, logSink);
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
/** Start on the asked port, or on any free one when it is taken (`notes` says which it took). */
async function onPortOrAny<T extends { url: string }>(what: string, variable: string, asked: number, start: (port: number) => Promise<T>) {
  try {
    return await start(asked);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw e;
  }
  const started = await start(0);
  notes.push(`port ${asked} is in use: the ${what} listens on port ${new URL(started.url).port} instead (${variable}=PORT to choose one)`);
  return started;
}
const notes: string[] = [];
let node;
let bridge;
const bridgeLog = pino({ base: { svc: 'token-bridge' }, level: logLevel }, logSink);
try {
  node = await onPortOrAny('witness', 'AW_DEV_PORT', port, (p) => startWitness({ ...witnessConfig, port: p }, log));
  // The token bridge: persistent signing keys under the data dir, a fresh demo chain each start.
  const bridgeConfig = { host: '127.0.0.1', keyDir: join(dataDir, 'bridge-keys'), dev: true };
  const bridgePort = Number(process.env.TB_DEV_PORT ?? 8421);
  bridge = await onPortOrAny('token bridge', 'TB_DEV_PORT', bridgePort, (p) => startBridge({ ...bridgeConfig, port: p }, bridgeLog));
} catch (e) {
  // A store or configuration refusal (say an `anchor-witness serve --data-dir` on the same dir): its one line.
  if (!(e instanceof ProtocolError)) {
    releaseLog(); // what was logged may explain the failure
    throw e;
  }
  const hint = /locked/.test(e.code) ? ` (another process uses ${shownDir}: stop it, or set AW_DEV_DATA_DIR to another dir)` : '';
  die(`${e.message}${hint}`);
}
const url = node.url;
const seed = encodeHex(seedId);
const demoDir = join(dataDir, 'bridge-demo');
rmSync(demoDir, { recursive: true, force: true });
mkdirSync(demoDir, { recursive: true });
const demo = writeDemo(demoDir, bridge.url, 'sts.amazonaws.com');
process.stdout.write(`listening on ${url}
listening on ${bridge.url}

anchor-witness (development mode) — data in ${dataDir}
${notes.map((n) => `  ${n}\n`).join('')}  witness key  ${encodeHex(node.witnessPublicKey)}
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
releaseLog(`\n-- log: JSON lines (level ${logLevel} and above; AW_LOG_LEVEL=info shows requests) --\n`);
const stop = (): void => {
  Promise.all([node.close(), bridge.close()]).then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
reloadOnSighup([node, bridge], log);
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
