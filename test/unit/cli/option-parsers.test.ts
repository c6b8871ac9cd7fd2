import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidArgumentError } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  collect,
  existingFile,
  httpUrl,
  portNumber,
  positiveSeconds,
  serverAddress,
  wholeNumber,
} from '../../../src/cli/option-parsers.ts';

describe('option parsers', () => {
  it.each([
    { text: '127.0.0.1:2525', address: { host: '127.0.0.1', port: 2525 } },
    { text: 'mail.example.org:25', address: { host: 'mail.example.org', port: 25 } },
    { text: '[::1]:2525', address: { host: '::1', port: 2525 } },
  ])('serverAddress($text)', ({ text, address }) => {
    expect(serverAddress(text)).toEqual(address);
  });

  it.each([
    { parse: serverAddress, text: 'localhost' },
    { parse: serverAddress, text: '::1:2525' },
    { parse: serverAddress, text: 'host:0' },
    { parse: serverAddress, text: 'host:65536' },
    { parse: portNumber, text: '65536' },
    { parse: portNumber, text: '-1' },
    { parse: portNumber, text: '80a' },
    { parse: wholeNumber, text: '1.5' },
    { parse: positiveSeconds, text: '0' },
    { parse: positiveSeconds, text: 'soon' },
    { parse: positiveSeconds, text: '' },
    { parse: httpUrl, text: '127.0.0.1:8025' },
    { parse: httpUrl, text: 'ftp://127.0.0.1/' },
  ])('$parse.name refuses $text as a usage error', ({ parse, text }) => {
    expect(() => parse(text)).toThrow(InvalidArgumentError);
  });

  it.each([
    { parse: portNumber, text: '0', value: 0 },
    { parse: wholeNumber, text: '250', value: 250 },
    { parse: positiveSeconds, text: '0.5', value: 0.5 },
    { parse: httpUrl, text: 'http://127.0.0.1:8025/', value: 'http://127.0.0.1:8025' },
  ])('$parse.name($text) → $value', ({ parse, text, value }) => {
    expect(parse(text)).toBe(value);
  });

  it('collect adds each use of a repeated option, in order', () => {
    const add = collect(String);
    expect(add('b', add('a', undefined))).toEqual(['a', 'b']);
  });

  describe('existingFile', () => {
    let directory: string;
    beforeAll(async () => {
      directory = await mkdtemp(join(tmpdir(), 'option-parsers-'));
      await writeFile(join(directory, 'present.yaml'), 'x: 1\n');
    });
    afterAll(async () => {
      await rm(directory, { recursive: true, force: true });
    });

    it('takes a file that exists', () => {
      expect(existingFile(join(directory, 'present.yaml'))).toBe(join(directory, 'present.yaml'));
    });
    it.each([
      { name: 'missing.yaml', message: 'no such file' },
      { name: '.', message: 'not a file' },
    ])('refuses $name: $message', ({ name, message }) => {
      expect(() => existingFile(join(directory, name))).toThrow(message);
    });
  });
});
