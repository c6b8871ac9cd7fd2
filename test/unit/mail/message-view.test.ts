import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readMessageView } from '../../../src/mail/message-view.ts';

const view = (text: string) =>
  readMessageView(Readable.from([Buffer.from(text.replace(/\n/g, '\r\n'), 'latin1')]));

describe('readMessageView', () => {
  it('decodes headers, and the text and HTML bodies from their transfer encodings and charsets', async () => {
    const message = `From: =?UTF-8?Q?Zo=C3=AB?= <z@example.com>
Subject: =?ISO-8859-1?Q?Caf=E9?=
X-Folded: one
 two
Content-Type: multipart/alternative; boundary=b

--b
Content-Type: text/plain; charset=iso-8859-1
Content-Transfer-Encoding: quoted-printable

Caf=E9 au lait
--b
Content-Type: text/html; charset=utf-8
Content-Transfer-Encoding: base64

${Buffer.from('<p>Caf\u00e9</p>').toString('base64')}
--b--
`;
    const result = await view(message);
    expect(result.headers).toEqual([
      { name: 'From', value: 'Zoë <z@example.com>' },
      { name: 'Subject', value: 'Café' },
      { name: 'X-Folded', value: 'one two' },
      { name: 'Content-Type', value: 'multipart/alternative; boundary=b' },
    ]);
    expect(result.text?.trim()).toBe('Café au lait');
    expect(result.html?.trim()).toBe('<p>Café</p>');
    expect(result.cut).toBe(false);
  });

  it('takes no attachment for a body, and a single-part message as its text', async () => {
    const attached = `Content-Type: multipart/mixed; boundary=m

--m
Content-Type: text/plain
Content-Disposition: attachment; filename=notes.txt

not the body
--m--
`;
    expect((await view(attached)).text).toBeNull();
    expect((await view('Subject: plain\n\nJust text.\n')).text?.trim()).toBe('Just text.');
  });
});
