import { describe, expect, it } from 'vitest';
import { escapeHtml, html, raw } from './html.js';

describe('the html tag', () => {
  it('html escapes every value, markup made by html or raw passes, arrays join, null/undefined/false vanish', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    const inner = html`<b>${'<i>'}</b>`;
    expect(html`<p title="${'"><script>'}">${inner}${[1, '<', raw('<br>')]}${null}${undefined}${false}${0}</p>`.text).toBe(
      '<p title="&quot;&gt;&lt;script&gt;"><b>&lt;i&gt;</b>1&lt;<br>0</p>',
    );
  });
});
