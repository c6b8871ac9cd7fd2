import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { authenticate } from './authenticate.ts';
import { pendingView } from './document-store.ts';
import type { MockFault } from './faults.ts';
import type { MockContext } from './mock-context.ts';
import { readMultipart } from './read-multipart.ts';
import { clientError, errorForStatus } from './request-error.ts';
import { respond } from './respond.ts';
import { validateUpload } from './validate-upload.ts';

/**
 * `POST /v3/documents` (parsing-api.md §4.2): 200 with the finished Document for `wait=true`
 * (the default), 201 with the pending one for `wait=false` (parsing-api-facts.md).
 */
export async function handleUpload(
  context: MockContext,
  req: IncomingMessage,
  res: ServerResponse,
  snakeCase: boolean,
): Promise<void> {
  const fault = context.faults.take();
  if (fault) return serveFault(context, req, res, fault);

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

  const { wait, document: input } = validation.upload;
  const now = new Date();
  const document = context.store.create(input, now);
  const { file } = form;
  context.uploads.record({
    documentIdentifier: document.meta.identifier,
    authorization: req.headers.authorization,
    fields: form.fields,
    file:
      file === null
        ? null
        : {
            fileName: file.fileName,
            contentType: file.contentType,
            size: file.bytes.length,
            sha256: createHash('sha256').update(file.bytes).digest('hex'),
            ...(context.retainFileBytes ? { bytes: file.bytes } : {}),
          },
    receivedAt: now.toISOString(),
  });
  context.logger.debug(
    { documentIdentifier: document.meta.identifier, fileName: document.meta.fileName, wait },
    'mock API accepted an upload',
  );
  return wait
    ? respond(res, 200, document, { snakeCase })
    : respond(res, 201, pendingView(document), { snakeCase });
}

async function serveFault(
  context: MockContext,
  req: IncomingMessage,
  res: ServerResponse,
  fault: MockFault,
): Promise<void> {
  if ('drop' in fault) {
    context.logger.debug('mock API drops a connection (injected fault)');
    // No response at all: the client sees the connection close under it.
    req.socket.destroy();
    return;
  }
  context.logger.debug({ status: fault.status }, 'mock API answers with an injected fault');
  const body = fault.body === undefined ? errorForStatus(fault.status) : fault.body;
  return respond(res, fault.status, body, fault.headers ? { headers: fault.headers } : {});
}
