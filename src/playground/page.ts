/**
 * The playground's HTML and CSS. No inline script or style (the page's Content-Security-Policy
 * forbids both, index.ts), no external font or CDN: everything comes from this server.
 */

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>newsmatch playground</title>
<link rel="icon" href="/playground/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/playground/style.css">
<script type="module" src="/playground/app.js"></script>
</head>
<body>
<header>
  <h1>newsmatch playground</h1>
  <p>Try <code>POST /v1/match</code> and <code>GET /v1/news</code> with your key. Every search is a metered call. The contract is at <a href="/openapi.json">/openapi.json</a>.</p>
</header>
<main>
<form id="query" autocomplete="off">
  <fieldset>
    <legend>Key</legend>
    <label>API key <input id="key" type="password" placeholder="nmb_…" spellcheck="false"></label>
    <label class="inline"><input id="remember" type="checkbox"> remember on this browser (localStorage)</label>
  </fieldset>
  <fieldset>
    <legend>Endpoint</legend>
    <label class="inline"><input type="radio" name="endpoint" value="match" checked> semantic: <code>POST /v1/match</code></label>
    <label class="inline"><input type="radio" name="endpoint" value="news"> keywords: <code>GET /v1/news</code></label>
  </fieldset>
  <fieldset id="match-query">
    <legend>Match by</legend>
    <label class="inline"><input type="radio" name="mode" value="text" checked> text</label>
    <label class="inline"><input type="radio" name="mode" value="vector"> vector</label>
    <label class="inline"><input type="radio" name="mode" value="like"> more like an article</label>
    <label data-mode="text">Text (text mode; empty lists the corpus newest-first) <textarea id="text" rows="3" maxlength="4000"></textarea></label>
    <label data-mode="vector" hidden>Vector (1024 numbers: a JSON array or separated by commas) <textarea id="vector" rows="3" spellcheck="false"></textarea></label>
    <label data-mode="like" hidden>Article id <input id="like" spellcheck="false"></label>
    <label>min_score <input id="min-score" type="number" min="-1" max="1" step="0.01" value="0.5"></label>
  </fieldset>
  <fieldset id="news-query" hidden>
    <legend>Keywords</legend>
    <label>q (words ANDed, "a phrase", a OR b, -excluded, prefix*) <input id="q" maxlength="500"></label>
  </fieldset>
  <fieldset>
    <legend>Filters</legend>
    <label>since (UTC) <input id="since" type="datetime-local" step="1"></label>
    <label>until (UTC) <input id="until" type="datetime-local" step="1"></label>
    <label>Sources <select id="sources" multiple size="4"></select></label>
    <label class="inline"><input id="exclude" type="checkbox"> exclude the chosen sources instead</label>
    <button id="load-sources" type="button">Load sources</button>
  </fieldset>
  <fieldset>
    <legend>Order</legend>
    <label class="inline"><input type="radio" name="order" value="time" checked> newest first</label>
    <label class="inline"><input type="radio" name="order" value="relevance"> by relevance</label>
    <label>Page size <input id="limit" type="number" min="1" max="100" value="20"></label>
  </fieldset>
  <button id="search" type="submit">Search</button>
</form>
<section id="output" aria-live="polite">
  <div id="error" role="alert" hidden></div>
  <p id="status"></p>
  <figure id="chart-box" hidden>
    <svg id="chart" role="img" aria-label="matches per day"></svg>
    <figcaption id="chart-caption"></figcaption>
  </figure>
  <ol id="results"></ol>
  <button id="more" type="button" hidden>Load more</button>
</section>
</main>
</body>
</html>
`;

export const STYLE_CSS = `:root { color-scheme: light dark; --accent: #2563eb; --muted: #6b7280; --box: rgba(37, 99, 235, 0.08); }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; max-width: 72rem; padding: 1rem; }
header h1 { margin: 0 0 0.25rem; font-size: 1.4rem; }
header p { margin: 0 0 1rem; color: var(--muted); }
main { display: grid; grid-template-columns: minmax(18rem, 24rem) 1fr; gap: 1.5rem; align-items: start; }
@media (max-width: 800px) { main { grid-template-columns: 1fr; } }
fieldset { border: 1px solid rgba(127, 127, 127, 0.35); border-radius: 6px; margin: 0 0 0.75rem; padding: 0.5rem 0.75rem; }
legend { font-weight: 600; }
label { display: block; margin: 0.35rem 0; }
label.inline { display: inline-block; margin-right: 0.75rem; }
input:not([type="checkbox"]):not([type="radio"]), textarea, select { display: block; width: 100%; font: inherit; margin-top: 0.15rem; }
textarea { resize: vertical; }
button { font: inherit; padding: 0.35rem 0.9rem; cursor: pointer; }
#search { background: var(--accent); color: white; border: 0; border-radius: 4px; }
#error { border: 1px solid #dc2626; background: rgba(220, 38, 38, 0.08); border-radius: 6px; padding: 0.5rem 0.75rem; margin-bottom: 0.75rem; }
#error code { font-weight: 700; }
#status { color: var(--muted); margin: 0 0 0.5rem; }
#chart-box { margin: 0 0 1rem; }
#chart { width: 100%; height: 120px; display: block; }
#chart rect { fill: var(--accent); }
#chart text { fill: var(--muted); font-size: 10px; }
figcaption { color: var(--muted); font-size: 0.85rem; }
#results { padding-left: 1.5rem; }
.result { margin: 0 0 1rem; }
.result .title { font-weight: 600; }
.result .meta { color: var(--muted); font-size: 0.85rem; display: flex; gap: 0.75rem; align-items: center; flex-wrap: wrap; }
.result meter { width: 8rem; }
.result .best { background: var(--box); border-left: 3px solid var(--accent); margin: 0.35rem 0; padding: 0.35rem 0.6rem; }
.result .highlight { margin: 0.35rem 0; }
.result mark { background: #fde68a; color: inherit; padding: 0 0.1em; }
.result .like { font-size: 0.8rem; padding: 0.15rem 0.6rem; }
`;

export const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#2563eb"/><path d="M4 12V4l8 8V4" stroke="#fff" stroke-width="2" fill="none"/></svg>
`;
