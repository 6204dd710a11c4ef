/** The dashboard's icon (browsers ask for one; without it every page costs a 404). */
export const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#2f6fb0"/><path d="M4 12V4l8 8V4" stroke="#fff" stroke-width="2" fill="none"/></svg>`;

/** The dashboard's stylesheet, served at /account/style.css (the pages' CSP allows no inline style). */
export const STYLE_CSS = `:root { color-scheme: light; --ink: #1d232b; --muted: #5b6573; --line: #d9dee5; --accent: #2f6fb0; --bad: #b8434a; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: #f6f7f9; }
header { display: flex; flex-wrap: wrap; align-items: center; gap: 1rem; padding: .75rem 1.5rem; background: #fff; border-bottom: 1px solid var(--line); }
header h1 { font-size: 1.1rem; margin: 0; }
header nav { display: flex; gap: 1rem; }
header nav a[aria-current="page"] { font-weight: 600; text-decoration: none; color: var(--ink); }
header form { margin-left: auto; }
main { max-width: 1100px; margin: 0 auto; padding: 1rem 1.5rem 3rem; }
section { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 1rem 1.25rem; margin: 1rem 0; }
h2 { font-size: 1.05rem; margin: 0 0 .5rem; }
table { border-collapse: collapse; width: 100%; font-size: .92rem; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, monospace; font-size: .9em; }
a { color: var(--accent); }
button { font: inherit; padding: .35rem .9rem; border: 1px solid var(--accent); background: var(--accent); color: #fff; border-radius: 4px; cursor: pointer; }
button.danger { background: var(--bad); border-color: var(--bad); }
button.plain { background: #fff; color: var(--accent); }
label { display: block; margin: .4rem 0; }
label.inline { display: inline-block; margin-right: 1rem; }
input[type="text"] { font: inherit; padding: .3rem .5rem; width: 24rem; max-width: 100%; }
input.secret { display: block; width: 100%; font-family: ui-monospace, monospace; padding: .5rem; background: #fffbe6; border: 1px solid #e6d58a; }
.notice { background: #fffbe6; border-color: #e6d58a; }
.error { border-color: var(--bad); }
.muted { color: var(--muted); }
.chart { max-width: 100%; height: auto; font-size: 10px; fill: var(--muted); }
.legend { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .25rem 1rem; margin: .25rem 0 0; }
.pager { display: flex; gap: 1rem; margin-top: .5rem; }
`;
