import { anyMessage } from '../../record/message-filter.ts';
import type { MessageRecord } from '../../record/message-record.ts';
import { decodeCursor, encodeCursor } from '../message-query.ts';
import type { MessageSearch } from '../search-messages.ts';
import { heldActions, messageReplayHint } from './held-actions.ts';
import { type Html, html } from './html.ts';
import { attachmentList, page, time } from './layout.ts';

/** Held messages per page. */
const pageSize = 20;

/** What the page says about each hold reason. */
const reasons: Record<string, string> = {
  sender_not_listed: 'sender not on the allow-list',
  malware: 'malware found',
  spam: 'spam',
  forwarding_confirmation: 'forwarding confirmation',
};

/** The outcome of the last action, carried over the redirect after its form. */
export type HeldNotice = { done: 'release' | 'discard'; id: string } | null;

/**
 * GET /held: the messages held for a decision, newest first, each with Release, Release and
 * allow sender, and Discard (the API's POST /v1/messages/{id}/release and /discard).
 */
export async function heldPage(
  params: URLSearchParams,
  search: MessageSearch,
  csrf: string,
  signedIn: boolean,
  notice: HeldNotice,
): Promise<Html> {
  const cursor = params.get('cursor');
  const after = cursor === null ? null : decodeCursor(cursor);
  const found = await search({
    filter: anyMessage,
    limit: pageSize,
    after,
    settledOnly: false,
    where: (record) => record.state === 'held',
  });
  const older =
    found.nextCursor === null
      ? null
      : `/held?${new URLSearchParams({ cursor: encodeCursor(found.nextCursor) })}`;
  const body = html`<h1>Held</h1>
    <p>Mail answered <code>250</code> and stored, but not uploaded until someone decides. Unreleased,
      it is discarded after <code>retention.held</code>.</p>
    ${
      notice === null
        ? null
        : html`<div role="status" class="notice"><p>Message <a href="/messages/${notice.id}" class="queue-id">${notice.id}</a> ${notice.done === 'release' ? 'released: its documents are queued for upload.' : 'discarded.'}</p></div>`
    }
    <div class="table-wrap">
    <table class="held">
      <caption class="visually-hidden">Held messages, newest first</caption>
      <thead><tr>
        <th scope="col">Received</th><th scope="col">Queue id</th><th scope="col">Sender</th>
        <th scope="col">Subject</th><th scope="col">Held</th><th scope="col">Documents</th><th scope="col">Actions</th>
      </tr></thead>
      <tbody>
        ${found.messages.length === 0 ? html`<tr><td colspan="7" class="empty">No message is held.</td></tr>` : found.messages.map((record) => row(record, csrf))}
      </tbody>
    </table>
    </div>
    ${older === null ? null : html`<p><a href="${older}" rel="next">Older held messages</a></p>`}`;
  return page({ title: 'Held', section: 'held', logoutCsrf: signedIn ? csrf : null, body });
}

function row(record: MessageRecord, csrf: string): Html {
  const hold = record.hold;
  const subject = record.subject ?? '(no subject)';
  return html`<tr data-message="${record.id}">
    <td data-label="Received">${time(record.receivedAt)}</td>
    <td data-label="Queue id"><a href="/messages/${record.id}" class="queue-id">${record.id}</a></td>
    <td data-label="Sender">${record.from ?? record.envelope.mailFrom ?? html`<span class="muted">none</span>`}
      <br><span class="muted">to</span> ${record.envelope.rcptTo.join(', ')}</td>
    <td data-label="Subject" class="subject">${record.subject ?? html`<span class="muted">(no subject)</span>`}</td>
    <td data-label="Held" data-field="hold">${hold ? html`${reasons[hold.reason] ?? hold.reason}<br><span class="muted">for</span> ${hold.workspace}` : null}</td>
    <td data-label="Documents">${attachmentList(record.attachments)}</td>
    <td data-label="Actions">${heldActions(record, csrf, subject, '/held')}${messageReplayHint(record)}</td>
  </tr>`;
}
