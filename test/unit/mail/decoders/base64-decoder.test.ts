import { randomBytes } from 'node:crypto';
import { Decoder as Libbase64Decoder } from 'libbase64';
import { describe, expect, it } from 'vitest';
import { Base64Decoder } from '../../../../src/mail/decoders/base64-decoder.ts';

async function decodeWith(decoder: NodeJS.ReadWriteStream, chunks: Buffer[]): Promise<Buffer> {
  const output: Buffer[] = [];
  const reading = (async () => {
    for await (const chunk of decoder as AsyncIterable<Buffer>) output.push(chunk);
  })();
  for (const chunk of chunks) decoder.write(chunk);
  decoder.end();
  await reading;
  return Buffer.concat(output);
}

/** A deterministic generator, so that a failing case can be run again. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

/** Base64 as mail carries it, and as broken senders write it: every kind of line and stray character. */
function messyBase64(next: () => number): Buffer {
  const text = randomBytes(Math.floor(next() * 3000)).toString('base64');
  const lineLength = [76, 76, 72, 64, 75, 1, 3][Math.floor(next() * 7)] ?? 76;
  const breaks = ['\r\n', '\r\n', '\r\n', '\n', '\r', ' \r\n'][Math.floor(next() * 6)] ?? '\r\n';
  let out = '';
  for (let at = 0; at < text.length; at += lineLength) out += text.slice(at, at + lineLength) + breaks;
  const strays = ['=', '==', '-', '_', '*', '\t', '\u00e9', '\u00ff', '.', 'A=', '\r', '\n'];
  const mess = next() < 0.5 ? 0 : Math.floor(next() * 6);
  for (let i = 0; i < mess; i++) {
    const at = Math.floor(next() * (out.length + 1));
    out = out.slice(0, at) + (strays[Math.floor(next() * strays.length)] ?? '') + out.slice(at);
  }
  return Buffer.from(out, 'latin1');
}

function split(bytes: Buffer, next: () => number): Buffer[] {
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; ) {
    const size = 1 + Math.floor(next() * (next() < 0.3 ? 8 : 400));
    chunks.push(bytes.subarray(at, at + size));
    at += size;
  }
  return chunks;
}

describe('Base64Decoder: the bytes libbase64 gives, faster', () => {
  it('decodes a clean body of CRLF lines exactly', async () => {
    const bytes = randomBytes(200_000);
    const body = Buffer.from(`${bytes.toString('base64').replace(/.{76}/g, '$&\r\n')}\r\n`, 'latin1');
    const chunks = [];
    for (let at = 0; at < body.length; at += 65_536) chunks.push(body.subarray(at, at + 65_536));
    expect(await decodeWith(new Base64Decoder(), chunks)).toEqual(bytes);
  });

  it('agrees with libbase64 on 3,000 messy inputs split at random', async () => {
    const next = random(20261124);
    for (let round = 0; round < 3000; round++) {
      const input = messyBase64(next);
      const chunks = split(input, next);
      const expected = await decodeWith(new Libbase64Decoder(), chunks);
      const actual = await decodeWith(new Base64Decoder(), chunks);
      if (!actual.equals(expected)) expect({ round, input: input.toString('latin1') }).toBeNull();
    }
  });

  it('agrees with libbase64 on padding in the middle and URL-safe characters', async () => {
    for (const text of [
      'QQ==QQ==',
      'QUJD-_RA',
      'QU\r\nJD\r\n',
      'Q',
      'QUI',
      '=QUJD',
      'QUJD\r',
      'QUJDRA=\r\n=',
    ]) {
      const input = [Buffer.from(text, 'latin1')];
      expect(await decodeWith(new Base64Decoder(), input), text).toEqual(
        await decodeWith(new Libbase64Decoder(), input),
      );
    }
  });
});
