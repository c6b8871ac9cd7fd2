import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { fromSameOrigin } from '../../../../src/http/console/console-access.ts';
import { downloadDisposition } from '../../../../src/http/stored-bytes.ts';

const request = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe('fromSameOrigin', () => {
  const cases: Array<[Record<string, string>, boolean, string]> = [
    [{ host: 'gw:8025' }, true, 'a program: no Origin'],
    [{ host: 'gw:8025', origin: 'http://gw:8025' }, true, 'a page of this server'],
    [
      { host: 'gw:8025', origin: 'http://gw:8025', 'sec-fetch-site': 'same-origin' },
      true,
      'same-origin fetch metadata',
    ],
    [{ host: 'gw:8025', origin: 'https://evil.example' }, false, 'another site'],
    [{ host: 'gw:8025', origin: 'http://gw:9999' }, false, 'another port'],
    [{ host: 'gw:8025', origin: 'null' }, false, 'an opaque origin'],
    [{ host: 'gw:8025', 'sec-fetch-site': 'cross-site' }, false, 'cross-site fetch metadata'],
    [
      { host: 'internal:8025', origin: 'https://console.example', 'x-forwarded-host': 'console.example' },
      true,
      'behind a proxy',
    ],
  ];
  it.each(cases)('%j → %s (%s)', (headers, expected) => {
    expect(fromSameOrigin(request(headers))).toBe(expected);
  });
});

describe('downloadDisposition', () => {
  it.each([
    ['report.pdf', `attachment; filename="report.pdf"; filename*=UTF-8''report.pdf`],
    ['a"b\\c.pdf', `attachment; filename="a_b_c.pdf"; filename*=UTF-8''a%22b%5Cc.pdf`],
    [
      'x\r\nSet-Cookie: y.pdf',
      `attachment; filename="x__Set-Cookie: y.pdf"; filename*=UTF-8''x%0D%0ASet-Cookie%3A%20y.pdf`,
    ],
    ['Übersicht.pdf', `attachment; filename="_bersicht.pdf"; filename*=UTF-8''%C3%9Cbersicht.pdf`],
    ['', `attachment; filename="attachment"; filename*=UTF-8''`],
  ])('%j', (name, header) => {
    expect(downloadDisposition(name)).toBe(header);
  });
});
