import { type RefusalEntry, type RefusalReader, refusalStages } from '../../record/refusal-log.ts';
import { encodeRefusalCursor, parseRefusalQuery } from '../refusal-routes.ts';
import { refusalReplayHint } from './held-actions.ts';
import { type Html, html } from './html.ts';
import { page, time } from './layout.ts';
import { apiQuery, type Filters, filterField, filterValue, formFilters } from './search-filters.ts';

/** The search form's fields, as GET /v1/refusals names its filters. */
const filterNames = ['from', 'to', 'client', 'stage', 'since'] as const;

const stageLabels: Record<RefusalEntry['stage'], string> = {
  connect: 'connect',
  mail: 'MAIL',
  rcpt: 'RCPT',
  data: 'DATA',
};

/**
 * GET /refused: the refusal log, newest first, with the filters of GET /v1/refusals: who was
 * refused, when, at which command, and the reply they were given.
 */
export async function refusedPage(
  params: URLSearchParams,
  read: RefusalReader,
  logoutCsrf: string | null,
): Promise<Html> {
  const filters = formFilters(params, filterNames);
  const query = parseRefusalQuery(apiQuery(filters, params.get('cursor')));
  const problems = 'problems' in query ? query.problems : [];
  const found =
    'problems' in query
      ? { refusals: [], nextCursor: null }
      : await read(query.filter, query.limit, query.after);
  const older =
    found.nextCursor === null
      ? null
      : `/refused?${new URLSearchParams([...filters, ['cursor', encodeRefusalCursor(found.nextCursor)]])}`;
  const body = html`<h1>Refused</h1>
    <p>Every connection, sender, recipient and message the gateway refused, newest first: what a
      sender was told, and why.</p>
    ${searchForm(filters)}
    ${problems.length > 0 ? html`<div role="alert" class="problems"><p>The search could not run:</p><ul>${problems.map((p) => html`<li>${p}</li>`)}</ul></div>` : null}
    <div class="table-wrap">
    <table class="refused">
      <caption class="visually-hidden">Refusals, newest first</caption>
      <thead><tr>
        <th scope="col">Refused at</th><th scope="col">Stage</th><th scope="col">Client</th>
        <th scope="col">Sender</th><th scope="col">Recipients</th><th scope="col">Reply</th>
      </tr></thead>
      <tbody>
        ${found.refusals.length === 0 ? html`<tr><td colspan="6" class="empty">No refusals match.</td></tr>` : found.refusals.map(row)}
      </tbody>
    </table>
    </div>
    ${older === null ? null : html`<p><a href="${older}" rel="next">Older refusals</a></p>`}`;
  return page({ title: 'Refused', section: 'refused', logoutCsrf, body });
}

function row(entry: RefusalEntry): Html {
  const none = html`<span class="muted">none</span>`;
  return html`<tr data-refusal="${entry.id}">
    <td data-label="Refused at">${time(entry.at)}</td>
    <td data-label="Stage"><span class="stage">${stageLabels[entry.stage]}</span><br><span class="muted">${entry.code}</span></td>
    <td data-label="Client">${entry.remoteAddress ?? html`<span class="muted">unknown</span>`}<br>
      <span class="muted">HELO</span> ${entry.helo ?? none}</td>
    <td data-label="Sender"><span class="muted">MAIL FROM</span> ${entry.mailFrom ?? html`<span class="muted">&lt;&gt; or not sent</span>`}<br>
      <span class="muted">From</span> ${entry.headerFrom ?? html`<span class="muted">not read</span>`}</td>
    <td data-label="Recipients">${entry.recipients.length === 0 ? none : entry.recipients.join(', ')}</td>
    <td data-label="Reply"><span class="reply">${entry.reply}</span>${refusalReplayHint(entry)}</td>
  </tr>`;
}

function searchForm(filters: Filters): Html {
  const value = (name: string) => filterValue(filters, name);
  const field = filterField('refused', filters);
  return html`<form method="get" action="/refused" class="filters" role="search" aria-label="Search refusals">
      ${field('from', 'Sender')}
      ${field('to', 'Recipient')}
      ${field('client', 'Client address')}
      <div class="field"><label for="refused-stage">Stage</label>
        <select id="refused-stage" name="stage">
          <option value="">any</option>
          ${refusalStages.map((stage) => html`<option value="${stage}"${stage === value('stage') ? html` selected` : null}>${stageLabels[stage]}</option>`)}
        </select></div>
      ${field('since', 'Refused since', 'date')}
      <div class="actions"><button type="submit">Search</button> <a href="/refused">Clear</a></div>
    </form>`;
}
