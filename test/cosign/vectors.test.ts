// Known-answer replays against the cosign role over loopback HTTP (research/c2sp-and-peers.md §3.3):
// the deterministic Go vectors (Appendix C), litewitness's hurl sequence and the geomys test log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { encodeHex } from '../../src/encoding/hex.ts';
import { cosignatureMessage } from '../../src/note/cosignature.ts';
import { verifyNote } from '../../src/note/signed-note.ts';
import { parseVkey } from '../../src/note/vkey.ts';
import { APPENDIX_C_TIME, LOG_NAME, SyntheticLog, WITNESS_NAME, logKeyC, logsDoc, startCosign } from '../helpers/cosign-harness.ts';
import { tempDir } from '../helpers/tmp.ts';

void test('Appendix C: log seed 40..5f, cosign seed 00..1f, time 1700000000 → the Go cosignature lines byte for byte', async () => {
  const { dir, cleanup } = tempDir();
  const log = new SyntheticLog(LOG_NAME, logKeyC);
  assert.equal(log.vkey, 'example.com/log+01882cac+ASVDuS/xCVURR2rcg2nbbdyTNmWhGXjdoUBO4QZsqVWd');
  const h = await startCosign({ dir, logsDoc: logsDoc({ origin: LOG_NAME, keys: [log.vkey] }), now: () => APPENDIX_C_TIME * 1000 });
  try {
    assert.equal(h.role.healthInfo().cosignVkey, 'witness.example/w1+e75f6532+BAOhB7/zzhC+HXDdGOdLwJln5NYwm6UNXx3chmQSVTG4');
    const cp3 = log.checkpoint(3);
    assert.equal(
      cp3,
      'example.com/log\n3\n1Pksj7uJcg6ztVZ3x9fvrd/rENEaGoSguo8aIzN/qpU=\n\n— example.com/log AYgsrE/ez4/BhHEe4UBKQHGthuzE+YCMq5nfqTEDvgtHUzlv1vwdYEWyDe6tF/l2ODx37u1cJKECMSuVvzaIINOTAgY=\n',
    );
    let r = await h.post(`old 0\n\n${cp3}`);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'text/plain; charset=utf-8');
    assert.equal(
      r.text,
      '— witness.example/w1 519lMgAAAABlU/EAYZ6u2iYaCM2WgDyyFQck4Op4QA7FWwiBFn4VWmoq2n7G4bwnmLJVQMd24K0/GaLg2A8MIYOpoBos4ha/phuYCg==\n',
    );
    assert.equal(
      encodeHex(cosignatureMessage(log.text(3), APPENDIX_C_TIME)),
      '636f7369676e61747572652f76310a74696d6520313730303030303030300a6578616d706c652e636f6d2f6c6f670a330a31506b736a37754a6367367a74565a337839667672642f72454e4561476f5367756f3861497a4e2f7170553d0a',
    );

    // The Appendix C request body, verbatim.
    const body =
      'old 3\nqze6NNHf4pAV3nF6bVdkqPsCnDp6D1tkuTtUNRiFv3w=\nWL0UluFoSqySAcLmh+565PUclqiw2B7zWDYouT0800U=\n/F9riP+FVPdbsvnm85wxsZNtRLaSdu33sSBalVuXYeM=\nw+azuR86E7mkJwss2RFiOrs6eoVa9ebktxyE+ZDNxGk=\n\n' +
      'example.com/log\n8\nxcLIIO00L92ozolra5z1uMAKIcxLIHFMxuXTwFw1JAs=\n\n— example.com/log AYgsrCZHRR9ejRCutsbrb373wd1mjNijdtXMfz6iMkcrOjk8vIHLKqS6eNYD9XEEsICUKK9wcl+C14poiq5oOG8BeQY=\n';
    r = await h.post(body);
    assert.equal(r.status, 200);
    assert.equal(
      r.text,
      '— witness.example/w1 519lMgAAAABlU/EAv8IGLu0y0Gi0JqSDgdAlb+Ah/KJIDaOdc25DlpDjXH8EezO5CSyPStRivEgF41whknSHFxw/DYC9yU1EJVT5DQ==\n',
    );

    // The project's own verifier accepts checkpoint + response (the client-side recipe of tlog-witness).
    const note = body.slice(body.indexOf('\n\n') + 2) + r.text;
    const v = verifyNote(note, [parseVkey(log.vkey), parseVkey(h.role.healthInfo().cosignVkeys[0]!)]);
    assert.equal(v.verified.length, 2);
    assert.equal(v.verified[1]!.timestamp, BigInt(APPENDIX_C_TIME));

    // The monitoring endpoint serves exactly that note.
    const originHash = createHash('sha256').update(LOG_NAME).digest('hex');
    const m = await h.get(`/${originHash}/checkpoint`);
    assert.equal(m.status, 200);
    assert.equal(m.text, note);
  } finally {
    await h.close();
    cleanup();
  }
});

// FiloSottile/torchwood cmd/litewitness/testdata/litewitness.txt (add-checkpoint.hurl), sigsum log
// key ffdc2d4d…100f. Differences: the unknown origin is 404 here (tlog-witness; litewitness said 403
// in older versions), and the tampered signature `…6gx=` has trailing bits set, so our strict base64
// refuses it as malformed (400); a canonical tampering (`…6gs=`) is the 403 case.
const SIGSUM_ORIGIN = 'sigsum.org/v1/tree/4d6d8825a6bb689d459628312889dfbb0bcd41b5211d9e1ce768b0ff0309e562';
const SIGSUM_VKEY = `${SIGSUM_ORIGIN}+5202289b+Af/cLU2Y5BJNP+r3iMDC+av9eWCD0fBJVDfzAux5zxAP`;
const sig1 = 'UgIom7fPZTqpxWWhyjWduBvTvGVqsokMbqTArsQilegKoFBJQjUFAmQ0+YeSPM3wfUQMFSzVnnNuWRTYrajXpNUbIQY=';
const sig3 = 'UgIom2VbtIcdFbwFAy1n7s6IkAxIY6J/GQOTuZF2ORV39d75cbAj2aQYwyJre36kezNobZs4SUUdrcawfAB8WVrx6go=';
const sig5 = 'UgIomw/EOJmWi0i1FQsOj+etB7F8IccFam/jgd6wzRns4QPVmyEZtdvl1U2KEmLOZ/ASRcWJi0tW90dJWAShei7sDww=';
const root1 = 'KgAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';
const root3 = 'RcCI1Nk56ZcSmIEfIn0SleqtV7uvrlXNccFx595Iwl0=';
const root5 = 'QrtXrQZCCvpIgsSmOsah7HdICzMLLyDfxToMql9WTjY=';
const h0 = (b: number): string => Buffer.concat([Buffer.from([0x2a, b]), Buffer.alloc(30)]).toString('base64');

function hurl(old: number, proof: string[], origin: string, size: number, root: string, sig: string): string {
  return `old ${old}\n${proof.map((p) => `${p}\n`).join('')}\n${origin}\n${size}\n${root}\n\n— ${origin} ${sig}\n`;
}

void test('litewitness add-checkpoint.hurl sequence (404 for the unknown origin)', async () => {
  const { dir, cleanup } = tempDir();
  const h = await startCosign({ dir, name: 'example.com/witness', logsDoc: logsDoc({ origin: SIGSUM_ORIGIN, keys: [SIGSUM_VKEY] }) });
  try {
    const proof13 = [h0(1), h0(2)];
    const steps: { body: string; status: number; text?: string | RegExp }[] = [
      { body: hurl(0, [], SIGSUM_ORIGIN, 1, root1, sig1), status: 200, text: /^— example\.com\/witness / },
      // tampered signature, non-canonical base64 (`…6gx=`) → malformed here
      { body: hurl(1, proof13, SIGSUM_ORIGIN, 3, root3, sig3.replace(/o=$/, 'x=')), status: 400 },
      // tampered signature, canonical (`…6gs=`) → 403
      { body: hurl(1, proof13, SIGSUM_ORIGIN, 3, root3, sig3.replace(/o=$/, 's=')), status: 403, text: /invalid signature/ },
      { body: hurl(1, proof13, `${SIGSUM_ORIGIN.slice(0, -1)}3`, 3, root3, sig3), status: 404, text: /unknown log/ },
      { body: hurl(1, [], SIGSUM_ORIGIN, 3, root3, sig3), status: 422, text: /consistency proof/ },
      {
        body: hurl(1, [h0(1), 'KgIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAABA='], SIGSUM_ORIGIN, 3, root3, sig3),
        status: 422,
        text: /consistency proof/,
      },
      { body: hurl(1, proof13, SIGSUM_ORIGIN, 3, root3, sig3), status: 200, text: /^— example\.com\/witness / },
      {
        body: hurl(1, [h0(1), '+fUDV+k970B4I3uKrqJM4aP1lloPZP8mvr2Z4wRw2LI=', h0(4)], SIGSUM_ORIGIN, 5, root5, sig5),
        status: 409,
        text: '3\n',
      },
      {
        body: hurl(3, [h0(2), h0(3), 'wgiIFdZfYNv6WU1OllBKsWnLYIS/DBMqt8Uh/S4OukE=', h0(4)], SIGSUM_ORIGIN, 5, root5, sig5),
        status: 200,
        text: /^— example\.com\/witness /,
      },
      { body: hurl(0, [], SIGSUM_ORIGIN, 5, root5, sig5), status: 409, text: '5\n' },
      // syntactically invalid note (no signature section)
      { body: `old 5\n\n${SIGSUM_ORIGIN}\n5\n${root5}\n`, status: 400 },
      // correctly signed note with an invalid checkpoint body
      {
        body: `old 5\n\n${SIGSUM_ORIGIN}\nfive\n${root1}\n\n— ${SIGSUM_ORIGIN} UgIom4JTC2MerrFcJ5xDcWHzRPVB6zzGBIw4OFqcKDflqjH4q4xY5vMxUxyczvdIlEwFYf7ivQU4KoWan2bLmzLx0go=\n`,
        status: 400,
      },
    ];
    for (const [i, s] of steps.entries()) {
      const r = await h.post(s.body);
      assert.equal(r.status, s.status, `step ${i + 1}: ${r.text}`);
      if (typeof s.text === 'string') assert.equal(r.text, s.text);
      else if (s.text !== undefined) assert.match(r.text, s.text);
      if (s.status === 409) assert.equal(r.headers.get('content-type'), 'text/x.tlog.size');
      else assert.equal(r.headers.get('content-type'), 'text/plain; charset=utf-8');
      if (s.status !== 200) assert.equal(r.text.split('\n').length, 2, 'one line of text');
    }
    const state = await h.store.cosign.getOrigin(SIGSUM_ORIGIN);
    assert.equal(state?.size, 5);
    assert.equal(state.root.length, 32);
  } finally {
    await h.close();
    cleanup();
  }
});

void test('geomys uptime test log: its checkpoint is cosigned and the cosignature verifies', async () => {
  const { dir, cleanup } = tempDir();
  const vkey = 'geomys.org/witness/test-log+c0787ff4+AeMb5VOzy60PTGdGmLPxOKGAa0jNyDGsgv2rnprGju1t';
  const origin = 'geomys.org/witness/test-log';
  const now = 1_760_000_000;
  const h = await startCosign({ dir, logsDoc: logsDoc({ origin, keys: [vkey] }), now: () => now * 1000 + 999 });
  try {
    const cp = `${origin}\n1\nBCml5C32yqMcl0gjTrcSOeNVx59oPnSdytBzDGBO5k0=\n\n— ${origin} wHh/9BPsoBNr2x0Ol3qPBYasIN0HI2ZiBg5ac0v3LQq/7F+YO7U4oWbDeJn1VaWVrlbSEM30Gr7WWYQjj2SBxRoJ/Ao=\n`;
    // The uptime probe sends `old 1` first and retries with the size a 409 names.
    let r = await h.post(`old 1\n\n${cp}`);
    assert.equal(r.status, 409);
    assert.equal(r.text, '0\n');
    r = await h.post(`old 0\n\n${cp}`);
    assert.equal(r.status, 200);
    assert.match(r.text, new RegExp(`^— ${WITNESS_NAME} [A-Za-z0-9/+]{102}==\\n$`));
    const v = verifyNote(cp + r.text, [parseVkey(vkey), parseVkey(h.role.healthInfo().cosignVkeys[0]!)]);
    assert.equal(v.verified[1]!.timestamp, BigInt(now));
    r = await h.post(`old 1\n\n${cp}`);
    assert.equal(r.status, 200);
  } finally {
    await h.close();
    cleanup();
  }
});
