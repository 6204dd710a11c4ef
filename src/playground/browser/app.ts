/**
 * The playground page's script (served as /playground/app.js, an ES module): builds a
 * `POST /v1/match` or `GET /v1/news` request from the form, sends it with the key as
 * `Authorization: Bearer`, and renders the rows, a per-day chart of the rows fetched so far and
 * a "Load more" button while there is a `next_cursor`. Text from the API is only ever set as
 * text (`textContent`), never parsed as HTML; a news highlight's `<mark>`s are rebuilt as
 * elements (format.ts).
 */
import { countByDay, highlightSegments, parseVector, safeHref, utcTime, type DayCount } from './format.js';

/** The key is kept here only while "remember" is ticked. */
const KEY_STORAGE = 'newsmatch.playground.key';
const SVG = 'http://www.w3.org/2000/svg';

/** A row of either endpoint: the article fields, plus a match's score and best chunk or a news hit's highlight. */
interface Row {
  id: string;
  title: string;
  body: string;
  source_name: string;
  source_url: string;
  event_time: string;
  score?: number | null;
  best_chunk?: string | null;
  highlight?: string | null;
}

interface Page {
  rows: Row[];
  next: string | null;
}

type Endpoint = 'match' | 'news';

/** A request the form describes; `page` fetches one page of it. */
interface Query {
  endpoint: Endpoint;
  page(cursor: string | null): Promise<Page>;
}

/** An API error body (README "Errors"), or a failure before one came back. */
class ApiFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

function el<T extends HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (!found) throw new Error(`the page has no #${id}`);
  return found as T;
}

const form = el<HTMLFormElement>('query');
const keyInput = el<HTMLInputElement>('key');
const remember = el<HTMLInputElement>('remember');
const textInput = el<HTMLTextAreaElement>('text');
const vectorInput = el<HTMLTextAreaElement>('vector');
const likeInput = el<HTMLInputElement>('like');
const minScore = el<HTMLInputElement>('min-score');
const qInput = el<HTMLInputElement>('q');
const since = el<HTMLInputElement>('since');
const until = el<HTMLInputElement>('until');
const sources = el<HTMLSelectElement>('sources');
const exclude = el<HTMLInputElement>('exclude');
const limit = el<HTMLInputElement>('limit');
const searchButton = el<HTMLButtonElement>('search');
const output = el<HTMLElement>('output');
const errorBox = el<HTMLElement>('error');
const status = el<HTMLElement>('status');
const results = el<HTMLOListElement>('results');
const more = el<HTMLButtonElement>('more');
const chartBox = el<HTMLElement>('chart-box');
const chart = el<HTMLElement>('chart') as unknown as SVGSVGElement;
const chartCaption = el<HTMLElement>('chart-caption');

const radio = (name: string): string => (form.querySelector(`input[name="${name}"]:checked`) as HTMLInputElement | null)?.value ?? '';
function setRadio(name: string, value: string): void {
  const input = form.querySelector(`input[name="${name}"][value="${value}"]`) as HTMLInputElement | null;
  if (input) input.checked = true;
}

// ---- the key: in memory, and in localStorage only while "remember" is ticked ----

function storage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null; // storage switched off: the key simply is not remembered
  }
}

function saveKey(): void {
  const s = storage();
  if (!s) return;
  if (remember.checked && keyInput.value.trim() !== '') s.setItem(KEY_STORAGE, keyInput.value.trim());
  else s.removeItem(KEY_STORAGE);
}

// ---- talking to the API ----

/** The parts of the answers the page reads (the full contract is /openapi.json). */
interface MatchAnswer {
  items: Row[];
  next_cursor?: string | null;
}
interface NewsAnswer {
  results: Row[];
  next_cursor: string | null;
}
interface SourcesAnswer {
  sources: { name: string; article_count: number }[];
}

async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  const key = keyInput.value.trim();
  if (key !== '') headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    throw new ApiFailure('network', `the request did not complete: ${(e as Error).message}`, 0);
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    const err = (typeof json === 'object' && json !== null ? json : {}) as { error?: unknown; message?: unknown };
    const code = typeof err.error === 'string' ? err.error : `http_${res.status}`;
    throw new ApiFailure(code, typeof err.message === 'string' ? err.message : text.slice(0, 300), res.status);
  }
  return json as T;
}

/** The form as a request, or a message saying what to fix before one can be sent. */
function buildQuery(): Query | string {
  const endpoint = radio('endpoint') as Endpoint;
  const order = radio('order');
  const size = Number(limit.value);
  if (!Number.isInteger(size) || size < 1 || size > 100) return 'page size: a whole number from 1 to 100';
  const window: Record<string, string> = {};
  const from = utcTime(since.value);
  const to = utcTime(until.value);
  if (from) window.since = from;
  if (to) window.until = to;
  const chosen = [...sources.selectedOptions].map((o) => o.value);
  const sourceField = exclude.checked ? 'exclude_sources' : 'sources';

  if (endpoint === 'news') {
    const params = new URLSearchParams({ q: qInput.value, sort: order, limit: String(size), ...window });
    if (chosen.length > 0) params.set(sourceField, chosen.join(','));
    return {
      endpoint,
      async page(cursor) {
        const withCursor = new URLSearchParams(params);
        if (cursor !== null) withCursor.set('cursor', cursor);
        const r = await call<NewsAnswer>('GET', `/v1/news?${withCursor}`);
        return { rows: r.results, next: r.next_cursor ?? null };
      },
    };
  }

  const body: Record<string, unknown> = { order, limit: size, ...window };
  const floor = Number(minScore.value);
  if (minScore.value === '' || !Number.isFinite(floor)) return 'min_score: a number from -1 to 1';
  body.min_score = floor;
  if (chosen.length > 0) body[sourceField] = chosen;
  const mode = radio('mode');
  if (mode === 'text' && textInput.value.trim() !== '') body.text = textInput.value;
  if (mode === 'vector') {
    const v = parseVector(vectorInput.value);
    if (typeof v === 'string') return v;
    body.vector = v;
  }
  if (mode === 'like') {
    if (likeInput.value.trim() === '') return 'enter an article id, or press "More like this" on a result';
    body.like = likeInput.value.trim();
  }
  return {
    endpoint,
    async page(cursor) {
      const r = await call<MatchAnswer>('POST', '/v1/match', cursor === null ? body : { ...body, cursor });
      return { rows: r.items, next: r.next_cursor ?? null };
    },
  };
}

// ---- rendering ----

function showError(e: unknown): void {
  errorBox.replaceChildren();
  if (e instanceof ApiFailure) {
    const code = document.createElement('code');
    code.textContent = e.code;
    errorBox.append(code, e.status ? ` (HTTP ${e.status}): ` : ': ', e.message);
  } else {
    errorBox.textContent = e instanceof Error ? e.message : String(e);
  }
  errorBox.hidden = false;
}

const when = (iso: string): string => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;

function renderRow(row: Row, endpoint: Endpoint): HTMLLIElement {
  const li = document.createElement('li');
  li.className = 'result';
  li.dataset.id = row.id;

  const title = document.createElement(safeHref(row.source_url) ? 'a' : 'span');
  title.className = 'title';
  title.textContent = row.title;
  if (title instanceof HTMLAnchorElement) {
    title.href = row.source_url;
    title.target = '_blank';
    title.rel = 'noopener noreferrer';
  }

  const meta = document.createElement('div');
  meta.className = 'meta';
  const source = document.createElement('span');
  source.className = 'source';
  source.textContent = row.source_name;
  const time = document.createElement('time');
  time.dateTime = row.event_time;
  time.textContent = when(row.event_time);
  meta.append(source, time);
  if (typeof row.score === 'number') {
    const bar = document.createElement('meter');
    // A cosine for /v1/match (0–1 in practice); BM25 for news, which has no upper bound.
    bar.min = 0;
    bar.max = endpoint === 'match' ? 1 : Math.max(1, row.score);
    bar.value = Math.max(0, row.score);
    const score = document.createElement('span');
    score.className = 'score';
    score.textContent = `score ${row.score.toFixed(3)}`;
    meta.append(bar, score);
  }
  li.append(title, meta);

  if (typeof row.best_chunk === 'string') {
    // The chunk that scored: the whole passage is the match, so the whole box is the emphasis.
    const best = document.createElement('blockquote');
    best.className = 'best';
    best.textContent = row.best_chunk;
    li.append(best);
  }
  if (typeof row.highlight === 'string') {
    const p = document.createElement('p');
    p.className = 'highlight';
    for (const s of highlightSegments(row.highlight)) {
      if (!s.mark) p.append(s.text);
      else {
        const m = document.createElement('mark');
        m.textContent = s.text;
        p.append(m);
      }
    }
    li.append(p);
  }
  if (endpoint === 'match') {
    const like = document.createElement('button');
    like.type = 'button';
    like.className = 'like';
    like.textContent = 'More like this';
    like.addEventListener('click', () => {
      setRadio('mode', 'like');
      likeInput.value = row.id;
      showMode();
      window.scrollTo(0, 0);
      void search();
    });
    li.append(like);
  }
  return li;
}

/** Bars of rows per UTC day, drawn again after every page. */
function drawChart(days: DayCount[], rows: number): void {
  chart.replaceChildren();
  chartBox.hidden = days.length === 0;
  if (days.length === 0) return;
  const width = 600;
  const height = 120;
  const top = 14;
  const bottom = 16;
  const max = Math.max(...days.map((d) => d.count));
  const step = width / days.length;
  chart.setAttribute('viewBox', `0 0 ${width} ${height}`);
  for (const [i, d] of days.entries()) {
    const h = max === 0 ? 0 : ((height - top - bottom) * d.count) / max;
    const rect = document.createElementNS(SVG, 'rect');
    rect.setAttribute('x', (i * step + step * 0.1).toFixed(2));
    rect.setAttribute('width', Math.max(step * 0.8, 0.5).toFixed(2));
    rect.setAttribute('y', (height - bottom - h).toFixed(2));
    rect.setAttribute('height', h.toFixed(2));
    rect.dataset.day = d.day;
    rect.dataset.count = String(d.count);
    const tip = document.createElementNS(SVG, 'title');
    tip.textContent = `${d.day}: ${d.count}`;
    rect.append(tip);
    chart.append(rect);
  }
  const label = (x: number, y: number, anchor: string, text: string) => {
    const t = document.createElementNS(SVG, 'text');
    t.setAttribute('x', String(x));
    t.setAttribute('y', String(y));
    t.setAttribute('text-anchor', anchor);
    t.textContent = text;
    chart.append(t);
  };
  label(0, height - 3, 'start', days[0].day);
  if (days.length > 1) label(width, height - 3, 'end', days[days.length - 1].day);
  label(0, 10, 'start', `max ${max}`);
  chartCaption.textContent = `Matches per day (UTC) among the ${rows} rows fetched so far.`;
}

// ---- searching and paging ----

let current: Query | null = null;
let rows: Row[] = [];
let next: string | null = null;
let pages = 0;

function setBusy(busy: boolean): void {
  searchButton.disabled = busy;
  more.disabled = busy;
  if (busy) output.dataset.state = 'loading';
}

async function loadPage(query: Query, cursor: string | null): Promise<void> {
  setBusy(true);
  try {
    const page = await query.page(cursor);
    if (query !== current) return; // a newer search started meanwhile
    rows.push(...page.rows);
    pages++;
    results.append(...page.rows.map((r) => renderRow(r, query.endpoint)));
    next = page.next;
    more.hidden = next === null;
    status.textContent = `${rows.length} row(s) in ${pages} page(s)${next === null ? '' : '; more with "Load more"'}.`;
    drawChart(countByDay(rows), rows.length);
    output.dataset.state = 'done';
  } catch (e) {
    if (query !== current) return;
    showError(e);
    output.dataset.state = 'error';
  } finally {
    if (query === current) {
      output.dataset.pages = String(pages);
      setBusy(false);
    }
  }
}

async function search(): Promise<void> {
  errorBox.hidden = true;
  rows = [];
  next = null;
  pages = 0;
  results.replaceChildren();
  more.hidden = true;
  status.textContent = '';
  drawChart([], 0);
  const query = buildQuery();
  if (typeof query === 'string') {
    current = null;
    setBusy(false);
    showError(new Error(query));
    output.dataset.state = 'error';
    return;
  }
  current = query;
  await loadPage(query, null);
}

async function loadSources(): Promise<void> {
  if (keyInput.value.trim() === '') return;
  try {
    const r = await call<SourcesAnswer>('GET', '/v1/sources');
    const chosen = new Set([...sources.selectedOptions].map((o) => o.value));
    sources.replaceChildren(
      ...r.sources.map((s) => {
        const o = document.createElement('option');
        o.value = s.name;
        o.textContent = `${s.name} (${s.article_count})`;
        o.selected = chosen.has(s.name);
        return o;
      }),
    );
    sources.dataset.loaded = String(r.sources.length);
  } catch (e) {
    showError(e);
  }
}

function showMode(): void {
  const endpoint = radio('endpoint');
  el<HTMLElement>('match-query').hidden = endpoint !== 'match';
  el<HTMLElement>('news-query').hidden = endpoint !== 'news';
  const mode = radio('mode');
  for (const label of form.querySelectorAll<HTMLElement>('[data-mode]')) label.hidden = label.dataset.mode !== mode;
}

// ---- wiring ----

const stored = storage()?.getItem(KEY_STORAGE);
if (stored) {
  keyInput.value = stored;
  remember.checked = true;
  void loadSources();
}
keyInput.addEventListener('input', saveKey);
keyInput.addEventListener('change', () => void loadSources());
remember.addEventListener('change', saveKey);
el<HTMLButtonElement>('load-sources').addEventListener('click', () => void loadSources());
form.addEventListener('change', (e) => {
  if ((e.target as HTMLInputElement).type === 'radio') showMode();
});
form.addEventListener('submit', (e) => {
  e.preventDefault();
  void search();
});
more.addEventListener('click', () => {
  if (current && next !== null) void loadPage(current, next);
});
showMode();
output.dataset.state = 'ready';
