/**
 * The gateway's mock parsing API answering every upload after argv[2] ms to the API key
 * argv[3], as a process of its own (bench/peers/slow-mock-api.ts starts it): its parsing of
 * each upload then runs beside the benchmark, not in it. It keeps no file bytes, notes when
 * each upload arrived, and speaks one JSON line per request on stdin/stdout:
 *
 *   (start)        → {"url": "http://127.0.0.1:PORT"}
 *   wait N         → {"reached": N} once N uploads have arrived in all
 *   arrivals       → {"arrivals": [ms, ...]} performance.now() of each upload, in order
 *   answers        → {"meanMs": ms} from each upload's request head to its answer's last byte
 *   fail           → {"failing": true} from now on every /v3 request gets 503: an outage
 *   heal           → {"healedAt": ms} the outage ends (performance.now(), as the arrivals)
 *   close (or EOF) → closes and exits
 */
import { subscribe } from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { createMockApi } from '@ingest-gateway/mock-parsing-api';
import { createLogger } from '../../src/logger.ts';

const [latencyMs, apiKey] = [Number(process.argv[2]), process.argv[3] ?? ''];
const mock = createMockApi({
  apiKey,
  logger: createLogger({
    level: 'silent',
    destination: new Writable({ write: (_chunk, _encoding, done) => done() }),
  }),
  retainFileBytes: false,
});
const { url } = await mock.start({ host: '127.0.0.1', port: 0 });
const answerNormally = () => mock.enqueueFault({ latencyMs, times: 'always' });
answerNormally();
const arrivals: number[] = [];
// How long the mock took to answer an upload: the latency plus its own reading of the form.
const requestStarts = new WeakMap<ServerResponse, number>();
const answerMs: number[] = [];
subscribe('http.server.request.start', (message) => {
  const { request, response } = message as { request: IncomingMessage; response: ServerResponse };
  if (request.method === 'POST') requestStarts.set(response, performance.now());
});
subscribe('http.server.response.finish', (message) => {
  const started = requestStarts.get((message as { response: ServerResponse }).response);
  if (started !== undefined) answerMs.push(performance.now() - started);
});
mock.onUpload(() => {
  arrivals.push(performance.now());
});
const say = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
say({ url });

for await (const line of createInterface({ input: process.stdin })) {
  const [command, argument] = line.trim().split(' ');
  if (command === 'wait') {
    await mock.waitForUploads(Number(argument));
    say({ reached: Number(argument) });
  } else if (command === 'arrivals') {
    say({ arrivals });
  } else if (command === 'answers') {
    say({ meanMs: answerMs.reduce((sum, ms) => sum + ms, 0) / answerMs.length });
  } else if (command === 'fail') {
    mock.clearFaults();
    mock.enqueueFault({ status: 503, method: '*', path: '/v3', latencyMs, times: 'always' });
    say({ failing: true });
  } else if (command === 'heal') {
    mock.clearFaults();
    answerNormally();
    say({ healedAt: performance.now() });
  } else if (command === 'close') {
    break;
  }
}
await mock.close();
