import { href, type PageContext } from "./context.js";
import { html, type SafeHtml } from "./html.js";
import { replicationBadge, replicationNotice } from "./replication-status.js";

const NAV: ReadonlyArray<readonly [string, string]> = [
  ["/", "Overview"],
  ["/jobs", "Jobs"],
  ["/failed", "Failed"],
  ["/processes", "Processes"],
  ["/recurring", "Recurring"],
  ["/concurrency", "Concurrency"],
  ["/rate-limits", "Rate limits"],
  ["/batches", "Batches"],
];

/** What a page hands the layout. */
export interface Page {
  readonly title: string;
  /** Which navigation entry is current. */
  readonly section: string;
  readonly body: SafeHtml;
}

/** What the last action did, from the `notice` and `n` the action's redirect carries (never free text). */
const NOTICES: Record<string, (n: number) => string> = {
  paused: () => "Queue paused.",
  resumed: () => "Queue resumed.",
  cleared: (n) => `Ready jobs cleared: ${n}`,
  retried: (n) => `Jobs retried: ${n}`,
  deleted: (n) => `Jobs deleted: ${n}`,
  enqueued: (n) => `Job enqueued: #${n}`,
  "not-enqueued": () => "The task's job was dropped by its concurrency limit.",
};

/**
 * The page shell: navigation, a notice from the last action, the page body. Scripts and styles
 * are files under /assets (never inline), so the Content-Security-Policy can forbid inline code.
 */
export function layout(context: PageContext, page: Page): string {
  const notice = context.query.get("notice");
  const noticeText =
    notice && Object.hasOwn(NOTICES, notice) ? NOTICES[notice]!(Number(context.query.get("n")) || 0) : null;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${page.title} · firm-queue</title>
<link rel="icon" href="${href(context, "/assets/favicon.svg")}" type="image/svg+xml">
<link rel="stylesheet" href="${href(context, "/assets/dashboard.css")}">
<script src="${href(context, "/assets/dashboard.js")}" defer></script>
</head>
<body data-refresh="${context.refreshMs}">
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <a class="brand" href="${href(context, "/")}">firm-queue</a>
  <nav aria-label="Sections"><ul>${NAV.map(
    ([path, label]) =>
      html`<li><a href="${href(context, path)}"${page.section === path ? html` aria-current="page"` : ""}>${label}</a></li>`,
  )}</ul></nav>
  <span class="status">${replicationBadge(context.replication)}${context.readOnly ? html`<span class="badge">read-only</span>` : ""}<span class="live" data-live-status>${context.refreshMs > 0 ? "live" : ""}</span></span>
</header>
<main id="main">
${noticeText ? html`<p class="notice" role="status">${noticeText}</p>` : ""}
${replicationNotice(context.replication)}
<h1>${page.title}</h1>
${page.body}
</main>
</body>
</html>`.value;
}
