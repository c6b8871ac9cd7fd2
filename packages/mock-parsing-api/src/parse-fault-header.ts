import { type Fault, mockFaultSchema, toFault } from './faults.ts';

/**
 * The `X-Mock-Fault` request header: a fault for this one request, so a test can fail one
 * call without touching the shared queue. Directives are separated by `;`, names are
 * case-insensitive:
 *
 *   status=503                    answer 503 with the RequestError a real 503 carries
 *   status=429; retry-after=2     the same with `Retry-After: 2` (seconds or an HTTP date)
 *   drop=before                   close the connection before the body is read
 *   drop=after                    handle the request (an upload is recorded), then close
 *                                 the connection instead of answering
 *   hang                          never answer; the client's own timeout ends it
 *   latency=200                   wait 200 ms first (at most MAX_LATENCY_MS), then answer
 *                                 normally or serve the other directive
 *
 * Pure: the header's value in, a validated fault or the reason it is not one out.
 */

export type FaultHeader = { ok: true; fault: Fault } | { ok: false; detail: string };

export const FAULT_HEADER = 'x-mock-fault';

export function parseFaultHeader(value: string): FaultHeader {
  const input: Record<string, unknown> = {};
  const seen = new Set<string>();
  for (const directive of value.split(';')) {
    const text = directive.trim();
    if (text === '') continue;
    const equals = text.indexOf('=');
    const name = (equals === -1 ? text : text.slice(0, equals)).trim().toLowerCase();
    const argument = equals === -1 ? undefined : text.slice(equals + 1).trim();
    if (seen.has(name)) return { ok: false, detail: `"${name}" is given twice` };
    seen.add(name);
    switch (name) {
      case 'status':
      case 'latency': {
        const number = integer(argument);
        if (number === undefined)
          return { ok: false, detail: `${name} needs a whole number, as in ${name}=503` };
        input[name === 'status' ? 'status' : 'latencyMs'] = number;
        break;
      }
      case 'retry-after':
        if (argument === undefined || argument === '')
          return { ok: false, detail: 'retry-after needs a value' };
        input.retryAfter = integer(argument) ?? argument;
        break;
      case 'drop':
        if (argument !== 'before' && argument !== 'after') {
          return { ok: false, detail: 'drop is drop=before or drop=after' };
        }
        input.drop = argument;
        break;
      case 'hang':
        if (argument !== undefined) return { ok: false, detail: 'hang takes no value' };
        input.hang = true;
        break;
      default:
        return {
          ok: false,
          detail: `unknown directive "${name}"; use status, retry-after, drop, hang or latency`,
        };
    }
  }
  const parsed = mockFaultSchema.safeParse(input);
  if (!parsed.success) {
    return { ok: false, detail: parsed.error.issues.map((issue) => describeIssue(issue)).join('; ') };
  }
  return { ok: true, fault: toFault(parsed.data) };
}

function integer(text: string | undefined): number | undefined {
  return text !== undefined && /^\d{1,9}$/.test(text) ? Number(text) : undefined;
}

/** The schema's names are the JSON ones; say them as the header spells them. */
function describeIssue(issue: { path: PropertyKey[]; message: string }): string {
  const names: Record<string, string> = { latencyMs: 'latency', retryAfter: 'retry-after' };
  const field = issue.path.map(String).join('.');
  return field === '' ? issue.message : `${names[field] ?? field}: ${issue.message}`;
}
