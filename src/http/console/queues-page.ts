import type { QueueStanding } from '../queue-overview.ts';
import { type Html, html } from './html.ts';
import { page } from './layout.ts';

/** GET /queues: each BullMQ queue's counts and its oldest job's age; Bull Board has the rest. */
export function queuesPage(standings: readonly QueueStanding[], logoutCsrf: string | null): Html {
  const body = html`<h1>Queues</h1>
    <div class="table-wrap"><table class="queues">
      <caption class="visually-hidden">Jobs per queue</caption>
      <thead><tr><th scope="col">Queue</th><th scope="col">Waiting</th><th scope="col">Active</th><th scope="col">Delayed</th>
        <th scope="col">Failed</th><th scope="col">Completed (kept)</th><th scope="col">Oldest waiting</th></tr></thead>
      <tbody>${standings.map(
        (queue) => html`<tr data-queue="${queue.name}">
          <th scope="row">${queue.name}</th>
          <td data-label="Waiting">${queue.waiting}</td>
          <td data-label="Active">${queue.active}</td>
          <td data-label="Delayed">${queue.delayed}</td>
          <td data-label="Failed">${queue.failed > 0 ? html`<a href="/failed">${queue.failed}</a>` : queue.failed}</td>
          <td data-label="Completed">${queue.completed}</td>
          <td data-label="Oldest waiting">${queue.oldestAgeSeconds === null ? html`<span class="muted">none</span>` : age(queue.oldestAgeSeconds)}</td>
        </tr>`,
      )}</tbody>
    </table></div>
    <p>Jobs one by one, their data and logs: <a href="/admin/queues/">Bull Board</a>.</p>`;
  return page({ title: 'Queues', section: 'queues', logoutCsrf, body });
}

function age(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}
