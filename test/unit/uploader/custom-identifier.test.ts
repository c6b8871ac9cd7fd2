import { describe, expect, it } from 'vitest';
import {
  type CustomIdentifierValues,
  parseCustomIdentifier,
  renderCustomIdentifier,
} from '../../../src/uploader/custom-identifier.ts';

const values: CustomIdentifierValues = {
  messageId: 'abc@mail.example',
  from: 'ann@acme.example',
  subject: 'Invoice 42',
  attachmentIndex: '3',
  fileName: 'invoice.pdf',
  queueId: 'mq7x2k3l0a1b2c',
  workspace: 'ws-1',
};

describe('renderCustomIdentifier', () => {
  it.each([
    { template: 'fixed', expected: 'fixed' },
    { template: '{queueId}-{attachmentIndex}', expected: 'mq7x2k3l0a1b2c-3' },
    { template: '{messageId}', expected: 'abc@mail.example' },
    { template: '{from}: {subject}', expected: 'ann@acme.example: Invoice 42' },
    { template: '{workspace}/{fileName}', expected: 'ws-1/invoice.pdf' },
    { template: '{queueId}{queueId}', expected: 'mq7x2k3l0a1b2cmq7x2k3l0a1b2c' },
    { template: '{{queueId}}', expected: '{queueId}' },
    { template: '{{{queueId}}}', expected: '{mq7x2k3l0a1b2c}' },
    { template: 'a}}b{{c', expected: 'a}b{c' },
  ])('$template → $expected', ({ template, expected }) => {
    expect(renderCustomIdentifier(template, values)).toBe(expected);
  });

  it('drops control characters from the values, not from the template', () => {
    expect(renderCustomIdentifier('{subject}', { ...values, subject: 'Line\r\none\ttab\u0000' })).toBe(
      'Lineonetab',
    );
  });

  it('does not expand placeholders that appear inside a value', () => {
    expect(renderCustomIdentifier('{subject}', { ...values, subject: 'see {queueId}' })).toBe(
      'see {queueId}',
    );
  });

  it('throws for a template the configuration refuses', () => {
    expect(() => renderCustomIdentifier('{nope}', values)).toThrow(/unknown placeholder \{nope\}/);
  });
});

describe('parseCustomIdentifier', () => {
  it.each([
    {
      template: '{part}',
      problems: [/^unknown placeholder \{part\}; expected one of \{messageId\}, \{from\}/],
    },
    { template: '{QueueId}', problems: [/^unknown placeholder \{QueueId\}/] },
    { template: '{}', problems: [/^unknown placeholder \{\}/] },
    { template: 'x{queueId', problems: [/^lone "\{" at position 1/] },
    { template: '}', problems: [/^lone "\}" at position 0/] },
    { template: '{a} and {b}', problems: [/\{a\}/, /\{b\}/] },
  ])('refuses $template', ({ template, problems }) => {
    const parsed = parseCustomIdentifier(template);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.problems).toHaveLength(problems.length);
    for (const [index, problem] of problems.entries()) expect(parsed.problems[index]).toMatch(problem);
  });

  it('splits a good template into text and placeholders', () => {
    expect(parseCustomIdentifier('in-{queueId}-{{x}}')).toEqual({
      ok: true,
      pieces: [
        { text: 'in-' },
        { placeholder: 'queueId' },
        { text: '-' },
        { text: '{' },
        { text: 'x' },
        { text: '}' },
      ],
    });
  });
});
