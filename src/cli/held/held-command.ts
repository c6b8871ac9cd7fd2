import type { Writable } from 'node:stream';
import { EXIT_FAILED, EXIT_OK } from '../cli-context.ts';
import type { GatewayHttp } from '../gateway-http.ts';

export type HeldCommand =
  | { action: 'list'; json: boolean }
  | { action: 'release'; id: string; allowSender?: 'address' | 'domain' }
  | { action: 'discard'; id: string };

/** What the commands read of a record (GET /v1/messages, the Message schema). */
interface HeldRecord {
  id: string;
  receivedAt: string;
  from: string | null;
  subject: string | null;
  state?: string;
  hold?: { reason: string; workspace: string };
  attachments: { state: string }[];
}

interface MessagePage {
  messages: HeldRecord[];
  nextCursor: string | null;
}

interface HeldAnswer {
  queued?: number;
  allowed?: { workspace: string; rule: string; service: string }[];
  record?: HeldRecord;
  error?: string;
}

/** Records per page of the listing: the API's largest page. */
const PAGE_SIZE = 100;

/**
 * `ingest-gateway held list [--json] | release ID [--allow-sender | --allow-domain] | discard ID`,
 * through the running gateway's HTTP API (README, "Held mail"), so a release that allows the
 * sender goes through the same allow-list change as the API's and the console's. Returns
 * the exit code: 0 done, 1 refused, not found, or the API did not answer.
 */
export async function runHeldCommand(
  command: HeldCommand,
  api: GatewayHttp,
  out: Writable,
  err: Writable,
): Promise<number> {
  const headers: Record<string, string> = api.token ? { authorization: `Bearer ${api.token}` } : {};
  try {
    if (command.action === 'list') return await list(command.json);
    const url = `${api.httpUrl}/v1/messages/${encodeURIComponent(command.id)}/${command.action}`;
    const body =
      command.action === 'release' && command.allowSender ? { allowSender: command.allowSender } : undefined;
    const response = await fetch(url, {
      method: 'POST',
      headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const answer = (await response.json().catch(() => ({}))) as HeldAnswer;
    if (response.status !== 200) {
      err.write(
        `${command.action} ${command.id}: ${response.status}: ${answer.error ?? response.statusText}\n`,
      );
      return EXIT_FAILED;
    }
    for (const { workspace, rule, service } of answer.allowed ?? []) {
      out.write(`allowed ${rule} for ${workspace} (parsing service: ${serviceNote(service)})\n`);
    }
    out.write(
      command.action === 'release'
        ? `released ${command.id}: ${answer.queued ?? 0} upload(s) queued\n`
        : `discarded ${command.id}\n`,
    );
    return EXIT_OK;
  } catch (caught) {
    const reason =
      caught instanceof Error
        ? caught.cause instanceof Error
          ? caught.cause.message
          : caught.message
        : String(caught);
    err.write(`the gateway's HTTP API at ${api.httpUrl} did not answer: ${reason}\n`);
    return EXIT_FAILED;
  }

  async function list(json: boolean): Promise<number> {
    const held: HeldRecord[] = [];
    let cursor: string | null = null;
    do {
      const query = new URLSearchParams({ state: 'held', limit: String(PAGE_SIZE) });
      if (cursor !== null) query.set('cursor', cursor);
      const response = await fetch(`${api.httpUrl}/v1/messages?${query}`, { headers });
      if (response.status !== 200) {
        const answer = (await response.json().catch(() => ({}))) as HeldAnswer;
        err.write(`list: ${response.status}: ${answer.error ?? response.statusText}\n`);
        return EXIT_FAILED;
      }
      const page = (await response.json()) as MessagePage;
      held.push(...page.messages);
      cursor = page.nextCursor;
    } while (cursor !== null);
    if (json) {
      out.write(`${JSON.stringify(held, null, 2)}\n`);
      return EXIT_OK;
    }
    if (held.length === 0) {
      out.write('no held mail\n');
      return EXIT_OK;
    }
    out.write('id\treceived\tworkspace\treason\tfrom\tdocuments\tsubject\n');
    for (const record of held) {
      const cells = [
        record.id,
        record.receivedAt,
        record.hold?.workspace ?? '-',
        record.hold?.reason ?? '-',
        record.from ?? '-',
        String(record.attachments.filter((entry) => entry.state === 'held').length),
        oneLine(record.subject ?? ''),
      ];
      out.write(`${cells.join('\t')}\n`);
    }
    return EXIT_OK;
  }
}

function serviceNote(service: string): string {
  if (service === 'added') return 'added';
  if (service === 'present') return 'already listed';
  return 'its list is empty, so it takes every sender and was left so';
}

/** A subject is shown on one line of the table, without its control characters. */
function oneLine(text: string): string {
  return text.replace(/[\p{Cc}\p{Cf}]/gu, ' ');
}
