/**
 * The dashboard's stylesheet, served from /assets/dashboard.css (kept in code so it ships in
 * the package's build with nothing to copy). Light and dark follow the system setting.
 */
export const STYLESHEET = `
:root {
  color-scheme: light dark;
  --bg: #f7f7f5; --panel: #ffffff; --text: #1d1f21; --muted: #5f6368; --line: #dcdcd6;
  --accent: #1f5fbf; --accent-text: #ffffff; --danger: #b3261e; --ok: #1e7d32; --warn: #a15c00;
  --ready: #1f5fbf; --scheduled: #6b4fbb; --claimed: #1e7d32; --blocked: #a15c00; --failed: #b3261e; --finished: #5f6368;
  --code: #f0f0ec; --focus: #f2a900;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; font-size: 15px; line-height: 1.45;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #15171a; --panel: #1e2125; --text: #e6e6e3; --muted: #a0a4a8; --line: #34383d;
    --accent: #7aa7ff; --accent-text: #0d1320; --danger: #ff8a80; --ok: #7bd88f; --warn: #ffb74d;
    --ready: #7aa7ff; --scheduled: #b39ddb; --claimed: #7bd88f; --blocked: #ffb74d; --failed: #ff8a80; --finished: #a0a4a8;
    --code: #272a2f; --focus: #ffd54f;
  }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--text); }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, pre:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: -9999px; }
.skip:focus { left: 1rem; top: 1rem; background: var(--panel); padding: .5rem; z-index: 2; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
.top { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1.5rem; padding: .6rem 1.2rem; background: var(--panel); border-bottom: 1px solid var(--line); }
.brand { font-weight: 700; text-decoration: none; color: var(--text); }
.top nav ul { display: flex; flex-wrap: wrap; gap: .2rem .9rem; list-style: none; margin: 0; padding: 0; }
.top nav a { text-decoration: none; padding: .2rem 0; color: var(--muted); }
.top nav a[aria-current="page"] { color: var(--text); border-bottom: 2px solid var(--accent); }
.status { margin-left: auto; display: flex; gap: .5rem; align-items: center; color: var(--muted); font-size: .85rem; }
.live::before { content: "●"; color: var(--ok); margin-right: .25rem; }
.live:empty::before { content: none; }
.live.paused-refresh::before { color: var(--muted); }
main { padding: 1rem 1.2rem 3rem; max-width: 1280px; margin: 0 auto; }
h1 { font-size: 1.5rem; margin: .4rem 0 1rem; word-break: break-word; }
h2 { font-size: 1.1rem; margin: 1.4rem 0 .6rem; word-break: break-word; }
.notice { background: var(--panel); border-left: 4px solid var(--ok); padding: .5rem .8rem; }
.notice.error { border-left-color: var(--danger); }
.totals { display: grid; grid-template-columns: repeat(auto-fit, minmax(120px, 1fr)); gap: .6rem; }
.total { display: flex; flex-direction: column; padding: .7rem .9rem; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; text-decoration: none; color: var(--text); }
.total .figure { font-size: 1.6rem; font-weight: 650; font-variant-numeric: tabular-nums; }
.total .label { color: var(--muted); text-transform: capitalize; }
.total-failed .figure { color: var(--failed); }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); gap: 0 1.2rem; }
.chart { margin: 0; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: .6rem; }
.chart svg { width: 100%; height: 120px; display: block; }
.chart figcaption { color: var(--muted); font-size: .85rem; margin-top: .3rem; }
.axis { stroke: var(--line); }
.bar-finished { fill: var(--claimed); }
.bar-failed { fill: var(--failed); }
.bar-cancelled { fill: var(--finished); }
.bar-pending { fill: var(--line); }
.progress-bar { width: 100%; min-width: 8rem; height: 10px; display: block; border-radius: 3px; }
.progress-bar.large { height: 18px; margin: .6rem 0 .2rem; }
.progress-caption { color: var(--muted); font-size: .85rem; }
.backlog-line { fill: none; stroke: var(--accent); stroke-width: 2; vector-effect: non-scaling-stroke; }
.key::before { content: "■ "; }
.key-finished::before { color: var(--claimed); }
.key-failed::before { color: var(--failed); }
.key-cancelled::before { color: var(--finished); }
.key-pending::before { color: var(--line); }
.table-wrap { overflow-x: auto; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
thead th { font-size: .8rem; text-transform: uppercase; letter-spacing: .03em; color: var(--muted); font-weight: 600; }
tbody tr:last-child > * { border-bottom: none; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.stale { background: color-mix(in srgb, var(--warn) 12%, transparent); }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .85rem; }
code.args { background: var(--code); padding: .05rem .3rem; border-radius: 4px; word-break: break-all; }
pre { background: var(--code); padding: .8rem; border-radius: 8px; overflow: auto; max-height: 32rem; white-space: pre-wrap; word-break: break-word; }
.name { font-weight: 600; word-break: break-word; }
.muted, .empty { color: var(--muted); }
.badge { display: inline-block; padding: 0 .45rem; border-radius: 999px; border: 1px solid var(--line); font-size: .8rem; color: var(--muted); }
.badge.paused, .badge.stale { border-color: var(--warn); color: var(--warn); }
.badge.running { border-color: var(--ok); color: var(--ok); }
.state { display: inline-block; padding: 0 .5rem; border-radius: 999px; font-size: .8rem; font-weight: 600; border: 1px solid currentColor; }
.state-ready { color: var(--ready); } .state-scheduled { color: var(--scheduled); } .state-claimed { color: var(--claimed); }
.state-pending { color: var(--scheduled); }
.state-blocked { color: var(--blocked); } .state-failed { color: var(--failed); } .state-finished, .state-deleted, .state-cancelled { color: var(--finished); }
.tabs ul { display: flex; flex-wrap: wrap; gap: .4rem; list-style: none; padding: 0; margin: 1rem 0 .6rem; }
.tabs a { display: inline-block; padding: .25rem .35rem; border-radius: 8px; text-decoration: none; }
.tabs a[aria-current="page"] { background: var(--panel); outline: 1px solid var(--line); }
.filters, .lookup { display: flex; flex-wrap: wrap; gap: .5rem .9rem; align-items: end; margin: .6rem 0; }
label { display: inline-flex; flex-direction: column; font-size: .85rem; color: var(--muted); gap: .15rem; }
label.confirm { flex-direction: row; align-items: center; gap: .35rem; }
input { font: inherit; padding: .3rem .45rem; border: 1px solid var(--line); border-radius: 6px; background: var(--panel); color: var(--text); }
button { font: inherit; padding: .35rem .8rem; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent); color: var(--accent-text); cursor: pointer; }
button.danger { background: transparent; color: var(--danger); border-color: var(--danger); }
.actions { display: flex; flex-wrap: wrap; gap: .6rem 1.2rem; align-items: center; margin: .8rem 0; }
.actions form { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
.row-actions { white-space: nowrap; }
.row-actions button { padding: .15rem .5rem; font-size: .85rem; }
.pager { display: flex; gap: 1rem; margin: .8rem 0; }
.facts { display: grid; grid-template-columns: repeat(auto-fill, minmax(180px, 1fr)); gap: .5rem 1rem; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: .8rem; margin: 0; }
.facts dt { color: var(--muted); font-size: .8rem; }
.facts dd { margin: 0; word-break: break-word; }
.timeline { padding-left: 1.2rem; }
.timeline .event { font-weight: 600; text-transform: capitalize; }
.error-name { color: var(--failed); }
ul.running, ul.runs, ul.related { list-style: none; margin: 0; padding: 0; }
ul.related li { padding: .15rem 0; }
@media (max-width: 640px) {
  main { padding: .8rem; }
  .top { padding: .5rem .8rem; }
  th, td { padding: .35rem .4rem; }
}
`;

/** A small icon, so browsers do not ask the server's root for /favicon.ico. */
export const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1f5fbf"/><path d="M4 4h8v2H6v2h5v2H6v3H4z" fill="#fff"/></svg>`;
