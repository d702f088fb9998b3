/**
 * KEL vectors from research/upstream-kel.md §4 (keripy 1.3.4 fixtures of auths-dev/auths at
 * 53313e20, the delegator's signatures derived there with keripy's seeds, and the derived
 * continuation B3): real signed events, so these tests need no KEL builder.
 *
 *   ROOT  [icp, ixn(seal dip), ixn2(seal drt), ixn3(revocation seal {d: AGENT})]   key: seed 00/0
 *   AGENT [dip, drt]                  dip key: seed 11/0 (DNLzxb3A…), drt key: seed 11/1 (DHV5Y_zY…)
 *   MULTI [icp(3 keys, kt 2), rot(2 keys)]   (B1 "rot_remove"): icp keys 00/0..2, rot keys 00/3, 00/4
 */
export interface VectorEvent {
  event: Record<string, unknown>;
  attachment: string;
}

const ev = (json: string, attachment: string): VectorEvent => ({ event: JSON.parse(json) as Record<string, unknown>, attachment });

export const ROOT_PREFIX = 'EGi2L3RdVkjkfYTAJZtKze0DvFqIv5JBSqp9DLnsMWYG';
export const AGENT_PREFIX = 'EC3GGlPqLPsWf38nWtrd7nJvpy1OFb0q-SEXcwlfsZvO';
export const MULTI_PREFIX = 'EMd282TNa216KX7fuXQyuic3SSv7J6dpv6YLqQFlT5_S';

export const ROOT_EVENTS: readonly VectorEvent[] = [
  ev(
    '{"v":"KERI10JSON00012b_","t":"icp","d":"EGi2L3RdVkjkfYTAJZtKze0DvFqIv5JBSqp9DLnsMWYG","i":"EGi2L3RdVkjkfYTAJZtKze0DvFqIv5JBSqp9DLnsMWYG","s":"0","kt":"1","k":["DCJnAqZaOwzpXbgdTI_6IrVQ8TNBPyo79U5jK4t3DtnZ"],"nt":"1","n":["ED8cXUQBXAdIxf6_rVkYTuNWEqSJxKW6-3dAlrkcvfRl"],"bt":"0","b":[],"c":[],"a":[]}',
    '-AABAADBBcfdIjfey3h_VyXERXM9ZmNud20skkJXQy8pNgBjvULGHhVgWejNeZgKKrZYiVjodrW1GpxN81A-nFFUsmAN',
  ),
  ev(
    '{"v":"KERI10JSON00013a_","t":"ixn","d":"EAv0lwOldmM0kY-cSwrzR9IvGLEgqlr_s2unTfYtRqYS","i":"EGi2L3RdVkjkfYTAJZtKze0DvFqIv5JBSqp9DLnsMWYG","s":"1","p":"EGi2L3RdVkjkfYTAJZtKze0DvFqIv5JBSqp9DLnsMWYG","a":[{"i":"EC3GGlPqLPsWf38nWtrd7nJvpy1OFb0q-SEXcwlfsZvO","s":"0","d":"EC3GGlPqLPsWf38nWtrd7nJvpy1OFb0q-SEXcwlfsZvO"}]}',
    '-AABAAB6c0Z5o3OrevnjvQXasT8Srb9n5EQmQRhVGwY0wqfAQNTA9KwedT3NZ4kZiILaJYRAnETY6sSqwzouEeblfmAP',
  ),
  ev(
    '{"v":"KERI10JSON00013a_","t":"ixn","d":"EP55z5zU3_lqvGyNkmNVLaZukXvTz5fklFfa3hVXM0vp","i":"EGi2L3RdVkjkfYTAJZtKze0DvFqIv5JBSqp9DLnsMWYG","s":"2","p":"EAv0lwOldmM0kY-cSwrzR9IvGLEgqlr_s2unTfYtRqYS","a":[{"i":"EC3GGlPqLPsWf38nWtrd7nJvpy1OFb0q-SEXcwlfsZvO","s":"1","d":"EPyV1OFk0BFOoC6-euVtCm8hhlFJs8WZY06bYq9DOyj6"}]}',
    '-AABAAB9pe4iHIRP5PHji6bWY37wfRNnC1xBpBH2lJYRCKYItzB2Pm9a-CvKpC_LiPsholAIqED_8LZ4oH74aUBBsvME',
  ),
  ev(
    '{"v":"KERI10JSON0000ff_","t":"ixn","d":"EOgZbfPHXf0u6wV4sDqQPV2jZzErtM4nwxQP7T4sK0qV","i":"EGi2L3RdVkjkfYTAJZtKze0DvFqIv5JBSqp9DLnsMWYG","s":"3","p":"EP55z5zU3_lqvGyNkmNVLaZukXvTz5fklFfa3hVXM0vp","a":[{"d":"EC3GGlPqLPsWf38nWtrd7nJvpy1OFb0q-SEXcwlfsZvO"}]}',
    '-AABAADKfYnSGZ_fagc9KFWPAc1-HMcluDOeTSkLFZKDHntLamUjvtRlMs9I120-wbr8-r-v0WbeuaJ_ZQYbL5A6wR0J',
  ),
];

export const AGENT_EVENTS: readonly VectorEvent[] = [
  ev(
    '{"v":"KERI10JSON00015f_","t":"dip","d":"EC3GGlPqLPsWf38nWtrd7nJvpy1OFb0q-SEXcwlfsZvO","i":"EC3GGlPqLPsWf38nWtrd7nJvpy1OFb0q-SEXcwlfsZvO","s":"0","kt":"1","k":["DNLzxb3AeKgHSOGYtEDGbbywdvm88yv2czAZo2c2SGF-"],"nt":"1","n":["EHWQzCSUldwEC3wfH_vTBryguSvSVHf60qNROZkRMvGI"],"bt":"0","b":[],"c":[],"a":[],"di":"EGi2L3RdVkjkfYTAJZtKze0DvFqIv5JBSqp9DLnsMWYG"}',
    '-AABAADuPQ02CxQInvid5hOzQuv-NeJJUx84luA8mIcJhtICF-AqnYp4l-SRy_8SBwNFCmABF8knQzvXWRWhSyTC36QF-GAB0AAAAAAAAAAAAAAAAAAAAAABEAv0lwOldmM0kY-cSwrzR9IvGLEgqlr_s2unTfYtRqYS',
  ),
  ev(
    '{"v":"KERI10JSON000160_","t":"drt","d":"EPyV1OFk0BFOoC6-euVtCm8hhlFJs8WZY06bYq9DOyj6","i":"EC3GGlPqLPsWf38nWtrd7nJvpy1OFb0q-SEXcwlfsZvO","s":"1","p":"EC3GGlPqLPsWf38nWtrd7nJvpy1OFb0q-SEXcwlfsZvO","kt":"1","k":["DHV5Y_zYmjLROjdPkebsgxEoYvZhJyykvHTlSXI2rHTM"],"nt":"1","n":["EFV8yPXTk10gXq5D1yl8b0bOZJ_35k-vDbqcS-hBySPy"],"bt":"0","br":[],"ba":[],"a":[]}',
    '-AABAADIatgiSAYOpMw-27jW-Sn3k6nKSjmRDnWz2Bn5ntE_SX_LY3p3qhH3MgA_4I4rU2q7Latrxr7Mdak4waJRZ4cK-GAB0AAAAAAAAAAAAAAAAAAAAAACEP55z5zU3_lqvGyNkmNVLaZukXvTz5fklFfa3hVXM0vp',
  ),
];

export const MULTI_EVENTS: readonly VectorEvent[] = [
  ev(
    '{"v":"KERI10JSON0001e7_","t":"icp","d":"EMd282TNa216KX7fuXQyuic3SSv7J6dpv6YLqQFlT5_S","i":"EMd282TNa216KX7fuXQyuic3SSv7J6dpv6YLqQFlT5_S","s":"0","kt":"2","k":["DCJnAqZaOwzpXbgdTI_6IrVQ8TNBPyo79U5jK4t3DtnZ","DFBogovNFN8H3iOS87AMgwmCCz0ko6_SzFmxbcBgTEFA","DLENOuSViE_-cT5PsdP2hLvi8mlu3I-hOkp0lDL2xFpB"],"nt":"2","n":["EOBL4V-xbEfI7nWi3PZkU4IcY3ZLCWPlQKMvD7xxgdTd","EP5vyr-R8SR1Odg8tmbumeA4z-ZcxWrnCvIQrujj-RlA","EDB5n4Rs4jcbqlW_xBg63GwhDkk3k4n2DdzleDXdLcNC"],"bt":"0","b":[],"c":[],"a":[]}',
    '-AACAACZ17rRAb6LFLDBjMIkY3ROdO0NB7FPE0nJFGVZ8iUIVXDksPjh2QcAexNfVgNEUL9b3ciFlJAxMN78D6fR3B4MABAqqGI0uEXoSJPPMSpU4EIz3oGJPAZ7U3-dFaw4hZMXgsqZjKN1hQBt9xsnHWUIpWzAGsP3TCKVQv3QaaFAwI4K',
  ),
  ev(
    '{"v":"KERI10JSON0001be_","t":"rot","d":"ENb3ofWuID9qeLGISJKezex1h2HgG4EbIqI0BE5Uee1a","i":"EMd282TNa216KX7fuXQyuic3SSv7J6dpv6YLqQFlT5_S","s":"1","p":"EMd282TNa216KX7fuXQyuic3SSv7J6dpv6YLqQFlT5_S","kt":"2","k":["DN3drLmD56iUsOwDcADdO6U_28yap2ve9ihu66ORIqnI","DGG-kD6rNpGZeGBCNmJ_qBHcio2OsxCfk5l4fFcxF7Cm"],"nt":"2","n":["EIeuC9bfybw_czKmESTTHK925eiOi3qth4O8S0Gekpah","ED8cXUQBXAdIxf6_rVkYTuNWEqSJxKW6-3dAlrkcvfRl"],"bt":"0","br":[],"ba":[],"a":[]}',
    '-AAC2AAAABCPP8lCxvRBYWaJ0DACxEsImiusHJvMdl-BTfOoylImZdIvv1PEKddMf_-Q0cQtWzy1ATDRdqYO1JMxEFlUC5gH2AABACB1IBRcB6clNO4EqQ_WT3fLL4thpspjaqeNdm_tcVK4T5ClQh5L7zxr0rpBTc2-RhIqDyQay2Px8IGaYhqbo3gA',
  ),
];

/** Ed25519 seeds (hex) of the keys above (keripy Salter, research §4 B). */
export const SEEDS = {
  /** ROOT's key, and MULTI's icp key 0. */
  s00_0: '50994fccf3045faca2c1f57b688eff2c2ee21d88febdd4086533f4f282db81ad',
  /** MULTI's rot key 0. */
  s00_3: 'dc31c7a10aba0a78a3a262109ae1189f571d74ab1df0f55fb7b446973631f1b4',
  /** AGENT's dip key. */
  s11_0: '03765fb565e4263fefb9136c34ae3aa7156caaa6031ae92423831545b10107e0',
  /** AGENT's drt key. */
  s11_1: '93b96e29e7d803956dd811e6586ed9de247237e5a613ce4a35d5247a028b16c1',
} as const;

/** A `dir:` document of the first `n` events. */
export function kelDocument(prefix: string, events: readonly VectorEvent[], n = events.length): string {
  const some = events.slice(0, n);
  return JSON.stringify({ prefix, events: some.map((e) => e.event), attachments: some.map((e) => e.attachment) });
}
