/**
 * The marketplace's categories (`/v1/categories`). The top-level departments are the
 * options of the search box's department menu, which every page of the site carries in its
 * header; a node's children are the subcategories of its best-sellers page (bestsellers.ts).
 */
import { assertNotRobotCheck, loadPage, ScrapeError, textOf } from '../page.js';

export interface Department {
  name: string;
  /** The site's search alias (`search-alias=tools` → `tools`). */
  alias: string;
  /** The browse node, when the menu gives one (`node=…`). */
  node_id: string | null;
}

export function parseDepartments(html: string): Department[] {
  const doc = loadPage(html);
  assertNotRobotCheck(doc);
  const options = [...doc.querySelectorAll('select#searchDropdownBox option')];
  if (options.length === 0) throw new ScrapeError('no department menu (#searchDropdownBox) on the page: the layout changed or the page is not the site');
  const out: Department[] = [];
  for (const o of options) {
    const value = o.getAttribute('value') ?? '';
    const name = textOf(o);
    const alias = /search-alias=([^&]+)/.exec(value)?.[1] ?? null;
    // "All Departments" (aps) is the menu's default, not a department.
    if (!name || !alias || alias === 'aps') continue;
    out.push({ name, alias, node_id: /node=(\d+)/.exec(value)?.[1] ?? null });
  }
  return out;
}
