import { type Html, html } from './html.ts';

/**
 * The search forms of the console's lists (messages, refusals): the filters a page was asked
 * for, the API query they make, and the form's text and date fields.
 */
export type Filters = ReadonlyArray<[string, string]>;

/** The filters the page was asked for, empty fields dropped (the form sends every field). */
export function formFilters(params: URLSearchParams, names: readonly string[]): Array<[string, string]> {
  return names.flatMap((name): Array<[string, string]> => {
    const value = params.get(name)?.trim() ?? '';
    return value === '' ? [] : [[name, value]];
  });
}

/** The API query of the page (GET /v1/messages, /v1/refusals): a date from the form becomes midnight UTC. */
export function apiQuery(filters: Filters, cursor: string | null): URLSearchParams {
  const query = new URLSearchParams();
  for (const [name, value] of filters) {
    query.set(name, name === 'since' && /^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
  }
  if (cursor !== null) query.set('cursor', cursor);
  return query;
}

/** A filter's value as the page was asked for it; '' when not. */
export function filterValue(filters: Filters, name: string): string {
  return filters.find(([key]) => key === name)?.[1] ?? '';
}

/** A labelled field of the form, its id `<idPrefix>-<name>`; `since` shows its date only. */
export function filterField(idPrefix: string, filters: Filters) {
  return (name: string, label: string, type = 'search'): Html => {
    const value = filterValue(filters, name);
    return html`<div class="field"><label for="${idPrefix}-${name}">${label}</label>
      <input id="${idPrefix}-${name}" name="${name}" type="${type}" value="${name === 'since' ? value.slice(0, 10) : value}"></div>`;
  };
}
