/**
 * The usage chart, drawn on the server as SVG: a bar a UTC day, stacked by product, with a
 * `<title>` on each piece (the browser's tooltip) and the numbers in data attributes. No script
 * and no inline style: colours are presentation attributes, which the page's CSP allows.
 */
import { PRODUCT_NAMES, type Product } from '../platform/index.js';
import { html, type Html } from './html.js';
import type { DailyUsage } from './usage.js';

const PALETTE = ['#2f6fb0', '#d0752b', '#3f9a54', '#b8434a', '#7a5aa8', '#8a6a3f', '#c9619f', '#6b6b6b', '#a7a72c', '#2aa7b5'];

/** A product's colour: by its place in the product list, so it is the same on every chart. */
export const productColour = (p: Product): string => PALETTE[PRODUCT_NAMES.indexOf(p) % PALETTE.length];

const BAR = 18;
const GAP = 4;
const LEFT = 44;
const TOP = 10;
const HEIGHT = 150;
const BOTTOM = 24;
/** Room right of the last bar for its day's label. */
const RIGHT = 16;

/** A round number at or above `n` for the axis (1, 2, 5 × 10^k). */
function niceMax(n: number): number {
  if (n <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(n));
  for (const m of [1, 2, 5, 10]) if (m * p >= n) return m * p;
  return 10 * p;
}

/** The bars of one measure (`requests` or `credits`) of `u`. */
export function usageChart(u: DailyUsage, measure: 'requests' | 'credits', label: string): Html {
  const sums = u.days.map((d) => [...u.cells.get(d)!.values()].reduce((n, c) => n + Math.max(0, c[measure]), 0));
  const max = niceMax(Math.max(0, ...sums));
  const width = LEFT + u.days.length * (BAR + GAP) + GAP + RIGHT;
  const scale = HEIGHT / max;
  const bars = u.days.map((day, i) => {
    const x = LEFT + GAP + i * (BAR + GAP);
    let y = TOP + HEIGHT;
    const pieces = u.products.map((p) => {
      const v = Math.max(0, u.cells.get(day)!.get(p)?.[measure] ?? 0);
      if (v === 0) return null;
      const h = v * scale;
      y -= h;
      return html`<rect x="${x}" y="${y.toFixed(2)}" width="${BAR}" height="${h.toFixed(2)}" fill="${productColour(p)}" data-product="${p}" data-value="${v}"><title>${day} ${p}: ${v} ${measure}</title></rect>`;
    });
    const tick =
      i % 5 === 0 || i === u.days.length - 1 ? html`<text x="${x + BAR / 2}" y="${TOP + HEIGHT + 16}" text-anchor="middle">${day.slice(5)}</text>` : null;
    return html`<g data-day="${day}" data-total="${sums[i]}">${pieces}${tick}</g>`;
  });
  return html`<svg class="chart" data-measure="${measure}" role="img" aria-label="${label}" viewBox="0 0 ${width} ${TOP + HEIGHT + BOTTOM}" width="${width}" height="${TOP + HEIGHT + BOTTOM}" xmlns="http://www.w3.org/2000/svg">
<title>${label}</title>
<line x1="${LEFT}" y1="${TOP + HEIGHT}" x2="${width - RIGHT}" y2="${TOP + HEIGHT}" stroke="#888"></line>
<line x1="${LEFT}" y1="${TOP}" x2="${width - RIGHT}" y2="${TOP}" stroke="#ddd"></line>
<text x="${LEFT - 6}" y="${TOP + 4}" text-anchor="end">${max}</text>
<text x="${LEFT - 6}" y="${TOP + HEIGHT + 4}" text-anchor="end">0</text>
${bars}
</svg>`;
}

/** The key to the colours: a swatch and a name per product shown. */
export function chartLegend(products: readonly Product[]): Html {
  return html`<ul class="legend">${products.map(
    (p) =>
      html`<li><svg width="12" height="12" aria-hidden="true" xmlns="http://www.w3.org/2000/svg"><rect width="12" height="12" fill="${productColour(p)}"></rect></svg> ${p}</li>`,
  )}</ul>`;
}
