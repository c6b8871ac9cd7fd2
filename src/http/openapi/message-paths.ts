import { refusalScanBound } from '../../record/refusal-log.ts';
import { scanBound } from '../search-messages.ts';
import {
  answer,
  body,
  changing,
  guarded,
  type Json,
  messageId,
  pathParameter,
  type QueryParameters,
  ref,
  refusal,
} from './path-pieces.ts';

/**
 * The routes of the messages the gateway received, held and refused, as OpenAPI path items:
 * the list, the record, its bytes, release and discard, the event stream and the refusal log.
 */
export function messagePaths(query: QueryParameters): Record<string, Record<string, Json>> {
  return {
    '/v1/messages': {
      get: {
        operationId: 'listMessages',
        summary: 'Search the message records, newest first',
        description: `Pages by nextCursor. One request reads at most ${scanBound} index entries, so a page may hold fewer than limit messages and still have a next one.`,
        parameters: query.messages,
        responses: {
          '200': answer('A page of messages', 'MessagePage'),
          '400': refusal('A parameter is unknown, repeated or malformed; problems lists each'),
          '408': refusal('wait: no matching message settled in time'),
          ...guarded,
        },
      },
      delete: {
        operationId: 'eraseEverything',
        summary: 'Erase everything the gateway stored (http.allowReset only)',
        description:
          "Records, raw copies, blobs, indexes and the queues' jobs under redis.prefix. For test isolation, when nothing is in flight.",
        responses: {
          '200': answer('Erased', 'Erased'),
          ...changing,
          '403': refusal(
            'http.allowReset is false; or, as for every state change, a request from another origin',
          ),
        },
      },
    },
    '/v1/messages/{id}': {
      get: {
        operationId: 'getMessage',
        summary: 'One message record',
        parameters: [messageId],
        responses: { '200': answer('The record', 'Message'), '404': refusal('No such message'), ...guarded },
      },
      delete: {
        operationId: 'deleteMessage',
        summary: 'Delete one message: its raw copy, record, stored documents and index entries',
        description:
          'The same bytes sent to the same recipients afterwards are a new message. Refused while an upload ' +
          'of it, or a poll for a parse outcome, is still to come.',
        parameters: [messageId],
        responses: {
          '200': answer('Deleted', 'Deleted'),
          '404': refusal('No such message, or its retention is over'),
          '409': refusal('An upload or a parse-outcome poll of it is still to come'),
          ...changing,
        },
      },
    },
    '/v1/messages/{id}/raw': {
      get: {
        operationId: 'getRawMessage',
        summary: "The e-mail as received (the record's sourceEmail)",
        parameters: [messageId],
        responses: {
          '200': body('The e-mail, as a download', 'message/rfc822'),
          '404': refusal('No such message, or its retention is over'),
          ...guarded,
        },
      },
    },
    '/v1/messages/{id}/attachments/{entry}': {
      get: {
        operationId: 'getAttachment',
        summary: 'The stored bytes of one attachment, as a download',
        description:
          'Typed as detected (application/octet-stream for an unsupported part), always with ' +
          'Content-Disposition: attachment. The bytes are kept until every upload of them settled: ' +
          'uploaded and rejected attachments answer 410, as do expired ones; failed ones stay for a retry.',
        parameters: [messageId, pathParameter('entry', 'The entry number', '^[0-9]{1,6}$')],
        responses: {
          '200': body('The bytes', '*/*'),
          '404': refusal('No such message or entry'),
          '410': refusal('The attachment is no longer stored'),
          ...guarded,
        },
      },
    },
    '/v1/messages/{id}/release': {
      post: {
        operationId: 'releaseMessage',
        summary: 'Release a held message: queue the uploads of its held documents',
        description:
          'Each held document is queued for upload once, as the intake would have queued it; the record ' +
          'says state released, and the message lives retention.messages from now. A repeated release ' +
          'queues nothing more. With allowSender, the sender is first added to the allow-list of each ' +
          'workspace the message was held for: on the parsing service (its list read, then PATCHed with ' +
          'every rule kept) and in Redis, from where every gateway instance admits the sender from then ' +
          'on. When the service does not take the change, nothing is released (502).',
        parameters: [messageId],
        requestBody: {
          required: false,
          content: { 'application/json': { schema: ref('ReleaseOptions') } },
        },
        responses: {
          '200': answer('Released now or before', 'HeldOutcome'),
          '400': refusal('A body that is not JSON, or asks for anything but allowSender'),
          '404': refusal('No such message, or its retention is over'),
          '409': refusal(
            'The message is not held, or was discarded; or allowSender cannot apply (no sender address, a forwarding confirmation)',
          ),
          '502': refusal(
            'allowSender: the parsing service did not take the allow-list change; the message stays held',
          ),
          '413': refusal('A body larger than 4096 bytes'),
          ...changing,
        },
      },
    },
    '/v1/messages/{id}/discard': {
      post: {
        operationId: 'discardMessage',
        summary: 'Discard a held message: delete its stored bytes, keep the record',
        description:
          'The raw copy and the stored documents are deleted; the record says state discarded and each ' +
          'held document discarded. A repeated discard changes nothing.',
        parameters: [messageId],
        responses: {
          '200': answer('Discarded now or before', 'HeldOutcome'),
          '400': refusal('A body that is not an empty JSON object'),
          '404': refusal('No such message, or its retention is over'),
          '409': refusal('The message is not held, or was released'),
          '413': refusal('A body larger than 4096 bytes'),
          ...changing,
        },
      },
    },
    '/v1/events': {
      get: {
        operationId: 'streamEvents',
        summary: 'Server-sent events: each new message, and each message whose attachment settled',
        description:
          'An event stream of `message` events, each one message record (the Message schema) as ' +
          'GET /v1/messages/{id} gives it, when the message is accepted and whenever one of its ' +
          'attachments reaches a final state. The filters of GET /v1/messages apply; paging and wait do not.',
        parameters: query.events,
        responses: {
          '200': body('The stream; each event’s data is a Message', 'text/event-stream'),
          '400': refusal('A bad filter, or a paging parameter'),
          ...guarded,
        },
      },
    },
    '/v1/refusals': {
      get: {
        operationId: 'listRefusals',
        summary: 'Search the refusal log, newest first',
        description:
          'Every refused connection, sender, recipient and message the SMTP role answered with an error ' +
          '(4xx or 5xx), kept retention.refusals and at most retention.maxRefusals entries (the oldest go ' +
          `first). Pages by nextCursor; one request reads at most ${refusalScanBound} entries, so a page may ` +
          'hold fewer than limit and still have a next one.',
        parameters: query.refusals,
        responses: {
          '200': answer('A page of refusals', 'RefusalPage'),
          '400': refusal('A parameter is unknown, repeated or malformed; problems lists each'),
          ...guarded,
        },
      },
    },
  };
}
