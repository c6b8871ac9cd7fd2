import { attachmentStates, type MessageRecord } from '../../record/message-record.ts';
import { encodeCursor, parseMessageQuery } from '../message-query.ts';
import type { MessageSearch } from '../search-messages.ts';
import { type Html, html } from './html.ts';
import { attachmentList, page, time } from './layout.ts';
import { apiQuery, type Filters, filterField, filterValue, formFilters } from './search-filters.ts';

/** The search form's fields, as GET /v1/messages names its filters. */
const filterNames = ['q', 'from', 'to', 'workspace', 'state', 'since'] as const;

/**
 * GET /: the messages, newest first, with the search of GET /v1/messages. The first page
 * follows /v1/events (console.js) and refreshes its rows when a matching message arrives or
 * settles; later pages stay as they are.
 */
export async function messageListPage(
  params: URLSearchParams,
  search: MessageSearch,
  logoutCsrf: string | null,
): Promise<Html> {
  const filters = formFilters(params, filterNames);
  const query = parseMessageQuery(apiQuery(filters, params.get('cursor')));
  const problems = 'problems' in query ? query.problems : [];
  const found =
    'problems' in query
      ? { messages: [], nextCursor: null }
      : await search({ filter: query.filter, limit: query.limit, after: query.after, settledOnly: false });
  const live = !params.has('cursor') && problems.length === 0;
  const older =
    found.nextCursor === null
      ? null
      : `/?${new URLSearchParams([...filters, ['cursor', encodeCursor(found.nextCursor)]])}`;
  const body = html`<h1>Messages</h1>
    ${searchForm(filters)}
    ${problems.length > 0 ? html`<div role="alert" class="problems"><p>The search could not run:</p><ul>${problems.map((p) => html`<li>${p}</li>`)}</ul></div>` : null}
    <p class="live-status" role="status" aria-live="polite" data-live-status>${live ? 'Live: new messages appear here as they arrive.' : null}</p>
    <div class="table-wrap">
    <table class="messages"${live ? html` data-live-events="/v1/events?${String(apiQuery(filters, null))}"` : null}>
      <caption class="visually-hidden">Messages, newest first</caption>
      <thead><tr>
        <th scope="col">Received</th><th scope="col">Queue id</th><th scope="col">Sender</th>
        <th scope="col">Recipients</th><th scope="col">Subject</th><th scope="col">Attachments</th>
      </tr></thead>
      <tbody data-live-rows>
        ${found.messages.length === 0 ? html`<tr><td colspan="6" class="empty">No messages match.</td></tr>` : found.messages.map(messageRow)}
      </tbody>
    </table>
    </div>
    ${older === null ? null : html`<p><a href="${older}" rel="next">Older messages</a></p>`}`;
  return page({ title: 'Messages', section: 'messages', logoutCsrf, body });
}

function messageRow(record: MessageRecord): Html {
  const href = `/messages/${record.id}`;
  return html`<tr data-message="${record.id}">
    <td data-label="Received">${time(record.receivedAt)}</td>
    <td data-label="Queue id"><a href="${href}" class="queue-id">${record.id}</a></td>
    <td data-label="Sender">${record.from ?? record.envelope.mailFrom ?? html`<span class="muted">none</span>`}</td>
    <td data-label="Recipients">${record.envelope.rcptTo.join(', ')}</td>
    <td data-label="Subject" class="subject">${record.subject ?? html`<span class="muted">(no subject)</span>`}</td>
    <td data-label="Attachments">${
      record.keptFor === 'postmaster'
        ? html`<span class="kept" data-kept-for="postmaster">kept for the postmaster</span>`
        : attachmentList(record.attachments)
    }</td>
  </tr>`;
}

function searchForm(filters: Filters): Html {
  const value = (name: string) => filterValue(filters, name);
  const field = filterField('filter', filters);
  return html`<form method="get" action="/" class="filters" role="search" aria-label="Search messages">
      ${field('q', 'Subject or file name')}
      ${field('from', 'Sender')}
      ${field('to', 'Recipient')}
      ${field('workspace', 'Workspace')}
      <div class="field"><label for="filter-state">Attachment state</label>
        <select id="filter-state" name="state">
          <option value="">any</option>
          ${attachmentStates.map((state) => html`<option${state === value('state') ? html` selected` : null}>${state}</option>`)}
        </select></div>
      ${field('since', 'Received since', 'date')}
      <div class="actions"><button type="submit">Search</button> <a href="/">Clear</a></div>
    </form>`;
}
