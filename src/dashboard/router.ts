import type { PageContext } from "./context.js";
import type { Page } from "./layout.js";
import { decodeSegment } from "./request-text.js";
import { batchPage } from "./pages/batch.js";
import { batchesPage } from "./pages/batches.js";
import { concurrencyPage } from "./pages/concurrency.js";
import { rateLimitsPage } from "./pages/rate-limits.js";
import { failedPage } from "./pages/failed.js";
import { jobPage } from "./pages/job.js";
import { jobsPage } from "./pages/jobs.js";
import { overviewPage } from "./pages/overview.js";
import { processesPage } from "./pages/processes.js";
import { queuePage } from "./pages/queue.js";
import { recurringPage } from "./pages/recurring.js";

type PageRoute = (context: PageContext, match: RegExpExecArray) => Promise<Page>;

/** Every page, by path (relative to the mount point). */
const PAGES: ReadonlyArray<readonly [RegExp, PageRoute]> = [
  [/^\/$/, (context) => overviewPage(context)],
  [/^\/queues\/([^/]+)$/, (context, match) => queuePage(context, decodeSegment(match[1]!))],
  [/^\/jobs$/, (context) => jobsPage(context)],
  [/^\/jobs\/([^/]+)$/, (context, match) => jobPage(context, decodeSegment(match[1]!))],
  [/^\/failed$/, (context) => failedPage(context)],
  [/^\/processes$/, (context) => processesPage(context)],
  [/^\/recurring$/, (context) => recurringPage(context)],
  [/^\/concurrency$/, (context) => concurrencyPage(context)],
  [/^\/rate-limits$/, (context) => rateLimitsPage(context)],
  [/^\/batches$/, (context) => batchesPage(context)],
  [/^\/batches\/([^/]+)$/, (context, match) => batchPage(context, decodeSegment(match[1]!))],
];

/** The page at `path`, or null when there is none. */
export async function renderPage(context: PageContext, path: string): Promise<Page | null> {
  for (const [pattern, route] of PAGES) {
    const match = pattern.exec(path);
    if (match) return route(context, match);
  }
  return null;
}
