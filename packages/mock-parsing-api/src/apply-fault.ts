import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { delay } from './delay.ts';
import type { Fault } from './faults.ts';
import type { MockContext } from './mock-context.ts';
import { FAULT_HEADER, parseFaultHeader } from './parse-fault-header.ts';
import { clientError, errorForStatus } from './request-error.ts';
import { respond } from './respond.ts';

/**
 * Serves the fault a /v3 request is due, before any route sees it (so before
 * authentication: a fault always reaches the client under test). The fault comes from the
 * request's `X-Mock-Fault` header, else from the queue (faults.ts). Says whether the
 * request is done with (`answered`) or must go on to its route (`continue`): after latency
 * alone, for `drop=after`, whose route runs in full and whose answer is then swallowed, and
 * for a late commit, which the upload route reads from `context.lateCommits`.
 */
export async function applyFault(
  context: MockContext,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<'answered' | 'continue'> {
  const header = req.headers[FAULT_HEADER];
  let fault: Fault | undefined;
  if (header !== undefined) {
    const parsed = parseFaultHeader(Array.isArray(header) ? header.join(';') : header);
    if (!parsed.ok) {
      respond(res, 400, clientError('invalid_mock_fault', `X-Mock-Fault: ${parsed.detail}.`));
      return 'answered';
    }
    fault = parsed.fault;
  } else {
    fault = context.faults.take({ method: req.method ?? '', path });
  }
  if (fault === undefined) return 'continue';

  const { action } = fault;
  const log = context.logger.child({ method: req.method, path, fault: action.kind });
  if (fault.latencyMs > 0) {
    log.debug({ latencyMs: fault.latencyMs }, 'mock API delays a request (injected fault)');
    if (!(await delay(fault.latencyMs, context.closed))) {
      req.socket.destroy();
      return 'answered';
    }
  }
  switch (action.kind) {
    case 'none':
      return 'continue';
    case 'late':
      log.debug(
        { commitDelayMs: action.commitDelayMs },
        'mock API will commit an upload late (injected fault)',
      );
      context.lateCommits.set(req, action.commitDelayMs);
      return 'continue';
    case 'status': {
      log.debug({ status: action.status }, 'mock API answers with an injected fault');
      const body = action.body === undefined ? errorForStatus(action.status) : action.body;
      respond(res, action.status, body, { headers: action.headers });
      return 'answered';
    }
    case 'drop':
      if (action.when === 'before') {
        log.debug('mock API drops a connection before reading the request (injected fault)');
        // No response at all: the client sees the connection close under it.
        req.socket.destroy();
        return 'answered';
      }
      log.debug('mock API will handle the request, then drop the connection (injected fault)');
      dropInsteadOfAnswering(req, res);
      return 'continue';
    case 'hang':
      log.debug('mock API leaves a request unanswered (injected fault)');
      // Read the body so the client has sent everything and is waiting for an answer; the
      // connection ends when the client gives up or close() destroys it.
      req.resume();
      if (!res.destroyed) await once(res, 'close');
      return 'answered';
  }
}

/**
 * Makes whatever the route answers close the connection instead, so the route's work (an
 * upload stored, a document created) happens and the client never hears of it. The
 * response's write methods are replaced on this one response object: routes answer
 * through respond() or, for other engineers' routes, through res directly, and both end
 * up here.
 */
function dropInsteadOfAnswering(req: IncomingMessage, res: ServerResponse): void {
  const drop = (): ServerResponse => {
    req.socket.destroy();
    return res;
  };
  for (const name of ['writeHead', 'write', 'end', 'flushHeaders'] as const) {
    Object.defineProperty(res, name, { value: drop, configurable: true, writable: true });
  }
}
