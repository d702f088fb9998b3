/**
 * The role's public reads (SPEC §3.6.5): GET /receipts (the `rct` with every held receipt as `-B`
 * indexed signatures in backer order) and GET /query?typ=kel (keripy's `cloneEvtMsg` stream, which
 * the OOBIs of oobi.ts reuse). Built from the ledger; nothing here signs.
 */
import { firstSeenGroup, parseWitnessAttachments, pipelined, receiptMessage, witnessSignatureGroup } from '../keri/cesr-attachments.ts';
import type { KelLedgerEvent, KelLedgerReads } from '../store/kel-ledger.ts';

/** GET /receipts: null when this node did not witness the event. */
export async function receiptsBody(
  ledger: KelLedgerReads,
  prefix: string,
  which: { sn: number } | { said: string },
): Promise<string | null> {
  const row = 'sn' in which ? await ledger.accepted(prefix, which.sn) : await ledger.bySaid(prefix, which.said);
  if (row === undefined || !row.witnessed) return null;
  const receipts = await ledger.receipts(prefix, row.said);
  return receiptMessage(prefix, row.sn.toString(16), row.said) + witnessSignatureGroup(receipts);
}

/** One event in keripy's cloneEvtMsg form: B(e), `-V` count, `-A`, `-B`, `-G`, `-E`. */
export async function cloneEvent(ledger: KelLedgerReads, row: KelLedgerEvent): Promise<string> {
  const att = parseWitnessAttachments(row.attachment, false);
  const receipts = await ledger.receipts(row.prefix, row.said);
  return (
    row.event +
    pipelined(att.controllerText + witnessSignatureGroup(receipts) + att.sourceSealText + firstSeenGroup(row.ordinal, row.firstSeen))
  );
}

/**
 * GET /query?typ=kel: without sn every stored event in first-seen order; with sn the accepted
 * events from sn on. Null for a prefix not held or sn past the tip.
 */
export async function queryKel(ledger: KelLedgerReads, prefix: string, sn: number | undefined): Promise<string[] | null> {
  const tip = await ledger.tip(prefix);
  if (tip === undefined || (sn !== undefined && sn > tip.sn)) return null;
  const rows = (await ledger.events(prefix)).filter((r) => sn === undefined || (r.state === 'accepted' && r.sn >= sn));
  if (sn !== undefined) rows.sort((a, b) => a.sn - b.sn);
  const out: string[] = [];
  for (const r of rows) out.push(await cloneEvent(ledger, r));
  return out;
}
