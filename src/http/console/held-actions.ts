import type { MessageRecord } from '../../record/message-record.ts';
import type { RefusalEntry } from '../../record/refusal-log.ts';
import { type Html, html } from './html.ts';

/**
 * What the Held and Refused pages and the message page offer besides looking: the held
 * message's buttons, and the way to take mail again under rules changed since (replay).
 */

/** What a release may ask besides releasing (the form's allowSender field). */
export const allowScopes = ['address', 'domain'] as const;
export type AllowScope = (typeof allowScopes)[number];

/**
 * A held message's three actions, each a form with the session's CSRF token; after one, the
 * browser goes back to `back` (null: the message's page). "Release and
 * allow sender" posts the same release with allowSender=address: the sender is added to the
 * workspace's allow-list on the parsing service, and the message released.
 */
export function heldActions(
  record: MessageRecord,
  csrf: string,
  subject: string,
  back: '/held' | null,
): Html {
  const form = (
    action: 'release' | 'discard',
    label: string,
    name: string,
    extra: Html | null,
    kind: string | null,
  ) => html`<form method="post" action="/messages/${record.id}/${action}" class="inline">
    <input type="hidden" name="csrf" value="${csrf}">
    ${back === null ? null : html`<input type="hidden" name="back" value="${back}">`}
    ${extra}
    <button type="submit" data-action="${name}"${kind === null ? null : html` class="${kind}"`} aria-label="${label}: ${subject}">${label}</button>
  </form>`;
  const sender = record.from ?? record.envelope.mailFrom;
  return html`<div class="held-actions">
    ${form('release', 'Release', 'release', null, null)}
    ${
      sender === null
        ? null
        : form(
            'release',
            'Release and allow sender',
            'release-allow',
            html`<input type="hidden" name="allowSender" value="address">`,
            'secondary',
          )
    }
    ${form('discard', 'Discard', 'discard', null, 'danger')}
  </div>`;
}

/** An argument as a POSIX shell reads it back unchanged. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

function replayCommand(file: string, recipients: readonly string[], mailFrom: string | null): string {
  const words = ['ingest-gateway', 'replay', shellWord(file)];
  for (const to of recipients) words.push('--to', shellWord(to));
  if (mailFrom !== null) words.push('--from', shellWord(mailFrom));
  words.push('--config', 'config/gateway.yaml');
  return words.join(' ');
}

/** "Run again under new rules" for a stored message: its raw file and the replay command. */
export function messageReplayHint(record: MessageRecord): Html {
  const file = `${record.id}.eml`;
  return html`<details class="replay-hint" data-replay="${record.id}">
    <summary>Run again under new rules</summary>
    <p>Download the message as received, <a href="/v1/messages/${record.id}/raw" download="${file}">${file}</a>,
      and take it again through the intake with
      <code>ingest-gateway replay</code> (README, "Replaying mail")
      once the allow-list or the workspace settings have changed:</p>
    <pre><code>${replayCommand(file, record.envelope.rcptTo, record.envelope.mailFrom)}</code></pre>
    <p class="muted">The same bytes to the same recipients count as a repeat for a week and answer with
      this message's id: name other recipients with <code>--to</code> to take it as a new message.</p>
  </details>`;
}

/**
 * "Run again under new rules" for a refusal: the gateway kept none of the refused mail, so the
 * command names the sender's copy of it.
 */
export function refusalReplayHint(entry: RefusalEntry): Html | null {
  if (entry.recipients.length === 0) return null;
  const file = 'message.eml';
  return html`<details class="replay-hint" data-replay="${entry.id}">
    <summary>Run again under new rules</summary>
    <p>Refused mail is not stored. Ask the sender for a copy (the <code>.eml</code> file) and,
      once the rules admit it, take it through the intake with
      <code>ingest-gateway replay</code> (README, "Replaying mail"):</p>
    <pre><code>${replayCommand(file, entry.recipients, entry.mailFrom)}</code></pre>
  </details>`;
}
