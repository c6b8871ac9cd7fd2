import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { authenticate } from './authenticate.ts';
import { delay } from './delay.ts';
import { countPdfPages } from './inspect-file.ts';
import type { MockContext } from './mock-context.ts';
import { decideParse, MAX_PARSED_PAGES, resolveParseSettings } from './process-document.ts';
import { readMultipart } from './read-multipart.ts';
import { clientError } from './request-error.ts';
import { respond } from './respond.ts';
import { validateUpload } from './validate-upload.ts';

/**
 * `POST /v3/documents` (README.md, "The upload"): 200 with the finished Document for
 * `wait=true` (the default), 201 with the pending one for `wait=false`. What processing
 * makes of the file is decided here, at upload (process-document.ts), and applied when
 * processing ends (parse-runner.ts); a later GET shows the final state.
 */
export async function handleUpload(
  context: MockContext,
  req: IncomingMessage,
  res: ServerResponse,
  snakeCase: boolean,
): Promise<void> {
  const denied = authenticate(req.headers.authorization, context.apiKey);
  if (denied) return respond(res, 401, denied, { headers: { 'www-authenticate': 'Bearer' } });

  const mediaType = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (mediaType !== 'multipart/form-data') {
    const detail = `Unsupported media type "${mediaType ?? ''}" in request; send multipart/form-data.`;
    return respond(res, 415, clientError('unsupported_media_type', detail));
  }

  const form = await readMultipart(req, { maxFileBytes: context.maxFileBytes });
  if (!form.ok) return respond(res, form.status, form.error);
  const validation = await validateUpload(form);
  if (!validation.ok) return respond(res, 400, validation.error);

  const { wait, deleteAfterParse, document: input, file: checked } = validation.upload;
  const workspace = input.workspace === null ? undefined : context.workspaceSettings(input.workspace);
  const settings = resolveParseSettings(validation.upload.rejectDuplicates, workspace);
  const { sha256 } = input;
  const outcome = decideParse(
    checked === null || sha256 === null
      ? { kind: 'url' }
      : {
          kind: 'file',
          bytes: checked.bytes,
          type: checked.type,
          duplicateOf: context.store.findByContent(input.workspace, sha256),
        },
    settings,
  );
  if (outcome.state === 'refused') return respond(res, 400, outcome.error);
  // A late commit (an injected fault): the form is read, and the document is created after the
  // delay whether or not the client is still waiting, as by a service slower than its client.
  const late = context.lateCommits.get(req);
  if (late !== undefined && !(await delay(late, context.closed))) return;

  const now = new Date();
  const document = context.store.create(input, now);
  // A rejected upload is not a document of the workspace a later upload can duplicate.
  if (sha256 !== null && outcome.state !== 'rejected') context.store.rememberContent(document, sha256);
  const { file } = form;
  context.uploads.record({
    documentIdentifier: document.meta.identifier,
    authorization: req.headers.authorization,
    query: Object.fromEntries(new URL(req.url ?? '/', 'http://mock.invalid').searchParams),
    fields: form.fields,
    file:
      file === null
        ? null
        : {
            fileName: file.fileName,
            contentType: file.contentType,
            size: file.bytes.length,
            sha256: sha256 ?? createHash('sha256').update(file.bytes).digest('hex'),
            ...(context.retainFileBytes ? { bytes: file.bytes } : {}),
          },
    receivedAt: now.toISOString(),
  });
  context.logger.debug(
    { documentIdentifier: document.meta.identifier, fileName: document.meta.fileName, wait },
    'mock API accepted an upload',
  );
  // A workspace's splitter makes a child document of each page of a multi-page PDF.
  const pages =
    workspace?.documentSplitter && checked?.type.supported && checked.type.type === 'pdf'
      ? Math.min(countPdfPages(checked.bytes), MAX_PARSED_PAGES)
      : 0;
  const job = { document, outcome, deleteAfterParse, splitPages: pages > 1 ? pages : 0 };
  if (wait) {
    // The mock closing mid-processing leaves nothing to answer; close() ends the connection.
    if (await context.parses.run(job)) respond(res, 200, document, { snakeCase });
    return;
  }
  // Serialized now, so the answer shows the document pending even when it finishes at once.
  respond(res, 201, document, { snakeCase });
  context.parses.run(job).catch((caught: unknown) => {
    context.logger.error(
      { err: caught, documentIdentifier: document.meta.identifier },
      'mock API processing failed',
    );
  });
}
