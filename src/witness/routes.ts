/**
 * HTTP routes of the anchor-witness node (SPEC §4, §6): its log (checkpoint, tiles, entry bundles),
 * health, the status page and the build statement, plus the anchor role's routes when it runs
 * (src/anchoring/routes.ts). Hardening (limits, timeouts, queue, problem+json, CORS, metrics) comes
 * from the shared layer in src/server, applied once around every route.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type {} from '@fastify/swagger';
import { encodeEntryBundle, parseTilePath, tilesAtLevel } from '../tlog/tiles.ts';
import type { TransparencyLog } from '../log/log.ts';
import type { AnchorService } from '../anchoring/service.ts';
import { registerAnchorRoutes } from '../anchoring/routes.ts';
import { witnessProblem } from './errors.ts';
import type { BuildInfo } from '../release/attestation.ts';
import { BuildStatementSchema } from '../release/schema.ts';
import { Problem } from '../server/problem-schema.ts';
import { Health } from './schemas.ts';
import { PAGE_HEADERS } from '../pages/layout.ts';
import { isStoreUnavailable } from '../store/errors.ts';
import type { StoreHealth } from '../store/health.ts';
import type { StatusPageRequest } from './status-page.ts';
import type { LogWitnessing } from '../log-witness/witnessing.ts';
import { CheckpointQuery } from './schemas.ts';
import type { SignerStatus } from '../keys/signer.ts';

export interface HealthInfo {
  name: string;
  roles: string[];
  version: string;
  origin: string;
  witnessKeyHex: string;
  logVkey: string;
  /** The first Ed25519 cosign vkey (or null). */
  cosignVkey: string | null;
  /** Every cosign vkey in `--cosign-key` order (empty without the cosign role). */
  cosignVkeys?: readonly string[];
  /** With --bastion: each bastion connection's state (SPEC §5.6). */
  bastions?: () => { addr: string; connected: boolean }[];
}

export interface WitnessRouteDeps {
  /** The witness log: checkpoint, tiles, entry bundles. */
  log: TransparencyLog;
  /** The anchor role, when the node runs it. */
  anchors: AnchorService | undefined;
  health: HealthInfo;
  /** The store's health: `/health` names the store kind and says `degraded` while it is down. */
  store?: StoreHealth;
  /** External signers (SPEC §1.1): `/health` lists them and says `degraded` while one is unavailable. */
  signers?: () => SignerStatus[];
  /** The HTML status page (src/witness/status-page.ts) from the /health body and the request's Host. */
  statusPage: (health: Record<string, unknown>, request: StatusPageRequest) => string | Promise<string>;
  /** The verified build statement (serve --build-attestation, SPEC §6); without it /build is 404. */
  build?: BuildInfo;
  /** The witnessed own log (SPEC §4.1, --log-witnesses): /log/checkpoint serves its checkpoint. */
  logWitnessing?: LogWitnessing | undefined;
}

const TEXT = 'text/plain; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';

export async function healthBody(deps: WitnessRouteDeps): Promise<Record<string, unknown>> {
  // The log size from the store; while the store is down, 0 and `status` "degraded".
  let size = 0;
  try {
    size = (await deps.log.checkpoint())?.size ?? 0;
  } catch (e) {
    if (!isStoreUnavailable(e) || deps.store === undefined) throw e;
    deps.store.failed(e);
  }
  const store = deps.store?.snapshot();
  const h = deps.health;
  const signers = deps.signers?.() ?? [];
  const signerDown = signers.some((s) => s.state !== 'ok');
  return {
    status: store?.state === 'down' || signerDown ? 'degraded' : 'ok',
    ...(store === undefined ? {} : { store }),
    ...(signers.length === 0 ? {} : { signers }),
    witness_name: h.name,
    roles: h.roles,
    version: h.version,
    log: { origin: h.origin, size },
    keys: { witness: h.witnessKeyHex, log_vkey: h.logVkey, cosign_vkey: h.cosignVkey },
    cosign_vkeys: [...(h.cosignVkeys ?? [])],
    ...(h.bastions === undefined ? {} : { bastions: h.bastions() }),
    ...deps.logWitnessing?.health(),
  };
}

async function sendTile(log: TransparencyLog, path: string, reply: FastifyReply): Promise<FastifyReply> {
  let parsed;
  try {
    parsed = parseTilePath(path);
  } catch {
    throw witnessProblem(404, 'not_found', 'not a tile path');
  }
  const cp = await log.checkpoint();
  const size = cp?.size ?? 0;
  const level = parsed.kind === 'tile' ? parsed.level : 0;
  const { full, partialWidth } = tilesAtLevel(size, level);
  const available = parsed.index < full ? 256 : parsed.index === full ? partialWidth : 0;
  if (parsed.width > available || parsed.width < 1) throw witnessProblem(404, 'not_found', 'that tile does not exist (yet) at that width');
  const data =
    parsed.kind === 'tile'
      ? await log.tile(parsed.level, parsed.index, parsed.width)
      : encodeEntryBundle(await log.entries(parsed.index, parsed.width));
  reply.header('cache-control', parsed.width === 256 ? 'public, max-age=31536000, immutable' : 'public, max-age=60');
  return reply.type('application/octet-stream').send(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
}

export function registerWitnessRoutes(app: FastifyInstance, deps: WitnessRouteDeps): void {
  const { log } = deps;
  if (deps.anchors !== undefined) registerAnchorRoutes(app, deps.anchors);

  app.get(
    '/log/checkpoint',
    {
      schema: {
        summary:
          "The witness log's checkpoint (C2SP tlog-checkpoint signed note): with --log-witnesses the newest one a quorum of peers cosigned, with their lines; ?unwitnessed=1 the newest node-signed one",
        querystring: CheckpointQuery,
      },
    },
    async (request, reply) => {
      const witnessing = deps.logWitnessing;
      const unwitnessed = (request.query as { unwitnessed?: string }).unwitnessed === '1';
      let note: string;
      if (witnessing !== undefined && !unwitnessed) note = await witnessing.checkpoint();
      else {
        const cp = await log.checkpoint();
        if (cp === undefined) throw witnessProblem(404, 'not_found', 'no checkpoint yet');
        note = cp.note;
      }
      return reply.type(TEXT).header('cache-control', 'max-age=5').send(note);
    },
  );

  app.get('/log/tile/*', { schema: { summary: 'tlog-tiles hash tiles and entry bundles' } }, async (request, reply) => {
    const rest = (request.params as { '*': string })['*'];
    return sendTile(log, `tile/${rest}`, reply);
  });

  app.get(
    '/health',
    { schema: { summary: 'Health and identity', response: { 200: Health } }, config: { bypassLimits: true } },
    async (_req, reply) => reply.type(JSON_TYPE).send(await healthBody(deps)),
  );

  app.get(
    '/',
    { schema: { summary: 'Status page (HTML); with Accept: application/json, the /health body' }, config: { bypassLimits: true } },
    async (request, reply) => {
      const body = await healthBody(deps);
      const accept = request.headers.accept ?? '';
      if (/application\/json/i.test(accept) && !/text\/html/i.test(accept)) return reply.type(JSON_TYPE).send(body);
      const page = await deps.statusPage(body, {
        host: request.headers.host,
        encrypted: 'encrypted' in request.raw.socket && request.raw.socket.encrypted === true,
      });
      return reply.type('text/html; charset=utf-8').headers(PAGE_HEADERS).send(page);
    },
  );

  app.get(
    '/build',
    { schema: { summary: 'Signed build statement', response: { 200: BuildStatementSchema, '4xx': Problem } } },
    (_req, reply) => {
      if (deps.build === undefined) throw witnessProblem(404, 'no_build_attestation', 'this node was started without a build attestation');
      return reply.type(JSON_TYPE).send(deps.build.json);
    },
  );
}
