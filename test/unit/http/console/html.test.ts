import { describe, expect, it } from 'vitest';
import { escapeHtml, html } from '../../../../src/http/console/html.ts';

describe('html templates', () => {
  it.each([
    ['<script>alert(1)</script>', '&lt;script&gt;alert(1)&lt;/script&gt;'],
    ['"><img src=x onerror=alert(1)>', '&quot;&gt;&lt;img src=x onerror=alert(1)&gt;'],
    ["it's & that", 'it&#39;s &amp; that'],
    ['plain text', 'plain text'],
  ])('escapes %j', (text, escaped) => {
    expect(escapeHtml(text)).toBe(escaped);
    expect(html`<td title="${text}">${text}</td>`.text).toBe(`<td title="${escaped}">${escaped}</td>`);
  });

  it('passes nested templates through as markup, and escapes lists item by item', () => {
    const items = ['<b>', 'ok'].map((item) => html`<li>${item}</li>`);
    expect(html`<ul>${items}</ul>`.text).toBe('<ul><li>&lt;b&gt;</li><li>ok</li></ul>');
  });

  it('renders nothing for null, undefined and booleans, and numbers as they are', () => {
    expect(html`[${null}${undefined}${false}${true}${42}]`.text).toBe('[42]');
  });
});
