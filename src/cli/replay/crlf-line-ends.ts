import { Transform, type TransformCallback } from 'node:stream';

const CR = 0x0d;
const LF = 0x0a;

/**
 * Writes each line feed that no carriage return precedes as CRLF, as a sending MTA does when
 * it relays a file kept with Unix line ends (mbox files always are; .eml files often). The
 * intake receives what SMTP would have carried: without it, `smtp.rejectBareLineEndings`
 * would refuse every such file. A bare CR is passed on, to be judged as SMTP would judge it.
 */
export function crlfLineEnds(): Transform {
  let lastByte = -1;
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      const parts: Buffer[] = [];
      let start = 0;
      for (let i = chunk.indexOf(LF); i !== -1; i = chunk.indexOf(LF, i + 1)) {
        const before = i === 0 ? lastByte : chunk[i - 1];
        if (before === CR) continue;
        parts.push(chunk.subarray(start, i), Buffer.from('\r'));
        start = i;
      }
      parts.push(chunk.subarray(start));
      if (chunk.length > 0) lastByte = chunk[chunk.length - 1] ?? -1;
      callback(null, Buffer.concat(parts));
    },
  });
}
