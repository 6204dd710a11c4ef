/**
 * The one way the dashboard writes markup: the `html` tag escapes every value it is given
 * unless the value is markup made by `html` itself (or `raw`, for the few fixed strings that
 * are markup). Attribute values are written quoted in the templates, and `"` and `'` are
 * escaped, so a value cannot leave its attribute either.
 *
 *   html`<td title="${name}">${count}</td>`   →  <td title="&lt;b&gt; &amp; &quot;x&quot;">3</td>
 */

/** Markup that is safe to insert as it is. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

const ENTITIES = new Map([
  ['&', '&amp;'],
  ['<', '&lt;'],
  ['>', '&gt;'],
  ['"', '&quot;'],
  ["'", '&#39;'],
]);

export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ENTITIES.get(c)!);

function render(v: HtmlValue): string {
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return v.map(render).join('');
  // null, undefined and false write nothing, so `${cond && html`…`}` reads naturally.
  if (v === null || v === undefined || v === false) return '';
  return escapeHtml(String(v));
}

/** A template whose values are escaped (arrays joined, null/undefined/false left out). */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new Html(out);
}

/** Fixed markup written by this code (never a value from a request or the store). */
export const raw = (text: string): Html => new Html(text);
