import { randomBytes } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { Splitter, type SplitterChunk, type SplitterOptions } from '@zone-eu/mailsplit';
import { afterEach, describe, expect, it, vi } from 'vitest';

/**
 * patches/@zone-eu+mailsplit+5.4.30.patch lets mailsplit hand on the body lines that cannot be
 * a delimiter without reading each one apart (processLine). It does so only while
 * `canSkipLines()` holds; with that answering false, mailsplit reads every line as it always
 * did. Both must give the same account of every message, however it is cut into writes
 * (where the writes are cut changes mailsplit's account in places, so each cut is compared
 * with itself).
 */

type Lines = 'skipped' | 'each read';

/** What the splitter hands on: each node's header block, and the bytes between, per type. */
async function split(
  input: Buffer,
  cuts: readonly number[],
  options: SplitterOptions,
  lines: Lines = 'skipped',
): Promise<string[]> {
  const splitter = new Splitter(options);
  if (lines === 'each read') Object.assign(splitter, { canSkipLines: () => false });
  const events: string[] = [];
  const reading = (async () => {
    try {
      for await (const item of splitter as AsyncIterable<SplitterChunk>) {
        if (item.type === 'node')
          events.push(`node ${item._headerlen} ${item.getHeaders().toString('latin1')}`);
        else {
          const last = events.at(-1);
          // Where the writes are cut decides how the same bytes are grouped into chunks.
          if (last?.startsWith(`${item.type} `))
            events[events.length - 1] = last + item.value.toString('latin1');
          else events.push(`${item.type} ${item.value.toString('latin1')}`);
        }
      }
    } catch (err) {
      events.push(`error ${(err as Error).message}`);
    }
  })();
  let from = 0;
  for (const to of [...cuts, input.length]) {
    if (splitter.destroyed) break;
    if (!splitter.write(input.subarray(from, to)))
      await new Promise<void>((resolve) => {
        // mailsplit's types name only its 'data' event.
        const events: EventEmitter = splitter;
        const done = () => {
          events.off('drain', done);
          events.off('close', done);
          resolve();
        };
        events.on('drain', done);
        events.on('close', done);
      });
    from = to;
  }
  if (!splitter.destroyed) splitter.end();
  await reading;
  return events;
}

/** A deterministic generator, so that a failing case can be run again. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

/**
 * Multipart bodies made of the lines the line search must not pass over: delimiters with
 * and without their closing `--` and trailing blanks, lines that start like one (`-`,
 * `<CR>-`, `--`), every line ending alone and mixed, nested multiparts, blank lines.
 */
function multipartMessage(next: () => number, id: number): Buffer {
  const pick = <T>(choices: readonly T[]): T => choices[Math.floor(next() * choices.length)] as T;
  const lineEnd = () => pick(['\r\n', '\r\n', '\n', '\r']);
  const body = (boundaries: readonly string[], depth: number): string => {
    let text = '';
    const lines = Math.floor(next() * 12);
    for (let line = 0; line < lines; line++) {
      const kind = next();
      if (kind < 0.15) text += `--${pick(boundaries)}${pick(['', '--', ' ', '--  ', 'x'])}${lineEnd()}`;
      else if (kind < 0.25)
        text += `${pick(['-', '\r-', '\r', '--', '-- ', '\r\r-', '\r\n'])}${'abc'.repeat(Math.floor(next() * 3))}${lineEnd()}`;
      else if (kind < 0.35 && depth < 3) {
        const inner = `inner${depth}-${Math.floor(next() * 100)}`;
        text += `--${boundaries[0]}\r\nContent-Type: multipart/mixed; boundary="${inner}"\r\n\r\n`;
        text += `${body([inner, ...boundaries], depth + 1)}--${inner}--\r\n`;
      } else if (kind < 0.4) text += lineEnd();
      else
        text +=
          randomBytes(30)
            .toString('base64')
            .slice(0, Math.floor(next() * 40)) + lineEnd();
    }
    return text;
  };
  const outer = `outer-${id}`;
  return Buffer.from(
    `Subject: case ${id}\r\nContent-Type: multipart/mixed; boundary="${outer}"\r\n\r\npreamble\r\n` +
      `${body([outer], 0)}--${outer}\r\nContent-Type: text/plain\r\n\r\n${body([outer], 1)}` +
      `--${outer}--\r\nepilogue${pick(['', '\r\n', '\n-', '\r'])}`,
    'latin1',
  );
}

const OPTIONS: readonly SplitterOptions[] = [
  { ignoreEmbedded: true },
  {},
  { maxChildNodes: 3 },
  { maxHeadSize: 200 },
];

describe('mailsplit with the patched line search', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('splits every fixture message as it does line by line, however the writes are cut', async () => {
    const next = random(11);
    const dir = 'test/fixtures/mail';
    const messages = readdirSync(dir)
      .filter((name) => name.endsWith('.eml'))
      .map((name) => readFileSync(`${dir}/${name}`));
    expect(messages.length).toBeGreaterThan(10);
    for (const message of messages) {
      for (let round = 0; round < 5; round++) {
        const cuts = Array.from({ length: round * 2 }, () => Math.floor(next() * message.length));
        cuts.sort((a, b) => a - b);
        expect(await split(message, cuts, {})).toEqual(await split(message, cuts, {}, 'each read'));
      }
    }
  });

  it('finds every delimiter among lines that start like one, with every line ending and limit', async () => {
    const next = random(7);
    for (let id = 0; id < 400; id++) {
      const message = multipartMessage(next, id);
      const options = OPTIONS[id % OPTIONS.length] ?? {};
      const cuts = Array.from({ length: Math.floor(next() * 8) }, () => Math.floor(next() * message.length));
      cuts.sort((a, b) => a - b);
      const expected = await split(message, cuts, options, 'each read');
      expect(await split(message, cuts, options), `case ${id}`).toEqual(expected);
    }
  });

  it('looks for a delimiter once per line however many dashes a line holds', async () => {
    // A body that is one line of dashes (hostile, or a very long rule): each search for a
    // dash that is not at the start of a line goes on after the line's end, so the searches
    // are counted per line and per write, never per dash.
    const boundary = 'dash-boundary';
    const message = Buffer.from(
      `Content-Type: multipart/mixed; boundary="${boundary}"\r\n\r\n--${boundary}\r\n` +
        `Content-Type: text/plain\r\n\r\nfirst line\r\nx${'-'.repeat(1_000_000)}\r\n--${boundary}--\r\n`,
      'latin1',
    );
    const cuts = Array.from({ length: Math.floor(message.length / 65_536) }, (_, at) => (at + 1) * 65_536);
    const expected = await split(message, cuts, {}, 'each read');
    const indexOf = vi.spyOn(Buffer.prototype, 'indexOf');
    const events = await split(message, cuts, {});
    const calls = indexOf.mock.calls.length;
    indexOf.mockRestore();
    expect(events).toEqual(expected);
    // 16 writes of 64 KiB.
    expect(calls).toBeLessThan(200);
  });

  it('passes over a base64 attachment without reading each of its lines apart', async () => {
    // The account of this message is checked against each line read in the tests above; here,
    // that the patch is in place and takes the lines of an attachment's body in one step.
    const lines = randomBytes(57 * 20_000)
      .toString('base64')
      .match(/.{1,76}/g);
    const boundary = 'attachment-boundary';
    const message = Buffer.from(
      `Content-Type: multipart/mixed; boundary="${boundary}"\r\n\r\n--${boundary}\r\n` +
        `Content-Type: application/pdf\r\nContent-Transfer-Encoding: base64\r\n\r\n` +
        `${lines?.join('\r\n')}\r\n--${boundary}--\r\n`,
      'latin1',
    );
    const processLine = vi.spyOn(Splitter.prototype as unknown as { processLine: () => void }, 'processLine');
    const cuts = Array.from({ length: Math.floor(message.length / 65_536) }, (_, at) => (at + 1) * 65_536);
    const events = await split(message, cuts, {});
    expect(events.find((event) => event.startsWith('body '))?.length).toBe(
      `body ${lines?.join('\r\n')}`.length,
    );
    // 20,000 lines; a line is read apart only where a write starts and at each header line
    // and delimiter.
    expect(processLine.mock.calls.length).toBeLessThan(100);
  });
});
