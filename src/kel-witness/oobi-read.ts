/**
 * The OOBI routes (SPEC §3.6.5, keripy `OOBIEnd`): `GET /oobi`, `/oobi/{B…}`, `/oobi/{B…}/controller`
 * (this witness) and `/oobi/{aid}/witness[/{B…}]` (a held, fully witnessed prefix). Any other
 * aid, role or eid is 404. Public, `KERI-AID` names the aid, `application/json+cesr`.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { sendProblem } from '../server/problem.ts';
import type { KelOobi } from './oobi.ts';
import { validPrefix } from './query-params.ts';

const CESR_JSON = 'application/json+cesr';

export function registerOobiRoutes(scope: FastifyInstance, oobi: KelOobi, witness: string): void {
  const send = (reply: FastifyReply, aid: string, body: string) =>
    reply
      .code(200)
      .header('content-type', CESR_JSON)
      .header('keri-aid', aid)
      .header('access-control-allow-origin', '*')
      .send(Buffer.from(body));
  const notFound = (reply: FastifyReply, detail: string) => sendProblem(reply, 404, 'not_found', detail);
  const own = async (reply: FastifyReply) => send(reply, witness, await oobi.own());
  const witnessOf = async (reply: FastifyReply, aid: string) => {
    const body = validPrefix(aid) ? await oobi.witness(aid) : null;
    if (body === null)
      return notFound(reply, 'the prefix is not held here, its latest event is not fully witnessed, or a delegator is not held');
    return send(reply, aid, body);
  };

  scope.get(
    '/oobi',
    { schema: { summary: "KERI witness: this node's OOBI (icp, /loc/scheme, /end/role/add; docs/protocol.md §3.6.5)" } },
    (_r, reply) => own(reply),
  );
  scope.get('/oobi/:aid', { schema: { summary: "KERI witness: this node's OOBI" } }, async (request, reply) => {
    if ((request.params as { aid: string }).aid !== witness) return notFound(reply, 'not this witness');
    return own(reply);
  });
  scope.get(
    '/oobi/:aid/:role',
    { schema: { summary: "KERI witness: this node's OOBI (role controller) or a held prefix's witness OOBI (role witness)" } },
    async (request, reply) => {
      const { aid, role } = request.params as { aid: string; role: string };
      if (role === 'controller' && aid === witness) return own(reply);
      if (role === 'witness') return witnessOf(reply, aid);
      return notFound(reply, 'not this witness, or a role other than controller/witness');
    },
  );
  scope.get(
    '/oobi/:aid/:role/:eid',
    { schema: { summary: "KERI witness: a held prefix's witness OOBI naming this witness" } },
    async (request, reply) => {
      const { aid, role, eid } = request.params as { aid: string; role: string; eid: string };
      if (role !== 'witness' || eid !== witness) return notFound(reply, 'only role witness with this witness as eid is served');
      return witnessOf(reply, aid);
    },
  );
}
