import type { ApiResult } from '../parsing-api/api-result.ts';
import {
  type DocumentListing,
  type ListedItem,
  type ListPage,
  readListPage,
} from '../parsing-api/document-list.ts';
import type { Document } from '../parsing-api/document-schema.ts';

/**
 * What a lookup by customIdentifier found (pure): the document an earlier attempt created,
 * none, or no answer to rely on. "None" is concluded only from a listing read completely:
 * every page answered 2xx with a list, every item read, no `next` page left unread and no
 * more documents counted than listed. Anything less is `unknown`, and the worker retries the
 * lookup later instead of uploading blindly (README: no reliable answer → retry), because a
 * document it failed to read may be the very one an earlier attempt created.
 *
 * A document matches when its customIdentifier is this upload's and its workspace is the
 * upload's, and it is not a child the service split off an upload (`parentDocument`). A matching document is certain knowledge, so it is found even when another page
 * or item could not be read.
 */
export type EarlierUpload = { found: Document } | { found: null } | { unknown: string };

export function findEarlierUpload(
  listing: DocumentListing,
  customIdentifier: string,
  workspace: string,
): EarlierUpload {
  const doubts: string[] = [];
  let listed = 0;
  let counted = 0;
  for (const [index, answer] of [...listing.followed, listing.last].entries()) {
    const page = readAnswer(answer);
    if ('unknown' in page) {
      doubts.push(page.unknown);
      continue;
    }
    listed += page.items.length;
    counted = Math.max(counted, page.count ?? 0);
    const isLast = index === listing.followed.length;
    if (isLast && page.next !== null) doubts.push(`document lookup read ${index + 1} pages and more remain`);
    for (const item of page.items) {
      const verdict = judge(item, customIdentifier, workspace);
      if (verdict === 'other') continue;
      if ('doubt' in verdict) doubts.push(verdict.doubt);
      else return { found: verdict.match };
    }
  }
  if (counted > listed) doubts.push(`document lookup counted ${counted} documents but listed ${listed}`);
  const [doubt] = doubts;
  return doubt === undefined ? { found: null } : { unknown: doubt };
}

function readAnswer(answer: ApiResult): Extract<ListPage, { readable: true }> | { unknown: string } {
  if (answer.kind === 'network') return { unknown: `document lookup failed: ${answer.error.message}` };
  if (answer.status < 200 || answer.status >= 300) {
    return { unknown: `document lookup answered HTTP ${answer.status}` };
  }
  if (answer.bodyError !== undefined) return { unknown: `document lookup answered ${answer.bodyError}` };
  const page = readListPage(answer.body);
  if (!page.readable) return { unknown: `document lookup answered ${page.reason}` };
  return page;
}

/** Whether a listed item is this upload's document, another's, or cannot be told. */
function judge(
  item: ListedItem,
  customIdentifier: string,
  workspace: string,
): { match: Document } | 'other' | { doubt: string } {
  if ('unreadable' in item) return { doubt: `document lookup listed ${item.unreadable}` };
  const { meta } = item.document;
  // A document the service split off an upload (documentSplitter) is a child of it, never the
  // upload itself, whatever customIdentifier the service gave it: the parent is the one to find.
  if (meta.parentDocument) return 'other';
  // Without its customIdentifier an item could be this upload's: the query asked for it.
  if (typeof meta.customIdentifier !== 'string') {
    return { doubt: `document lookup listed document ${meta.identifier} without its customIdentifier` };
  }
  if (meta.customIdentifier !== customIdentifier) return 'other';
  const owner = meta.workspace?.identifier;
  // A template may give two workspaces' uploads the same identifier: the workspace decides.
  if (typeof owner !== 'string') {
    return { doubt: `document lookup listed document ${meta.identifier} without its workspace` };
  }
  return owner === workspace ? { match: item.document } : 'other';
}
