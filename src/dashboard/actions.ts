import { FirmQueueError } from "../errors.js";
import { href, type PageContext } from "./context.js";
import { PageError } from "./pages/page-error.js";
import { decodeSegment } from "./request-text.js";

/** Where to send the browser after an action (303 See Other). */
export interface Redirect {
  readonly location: string;
}

type Action = (context: PageContext, form: URLSearchParams, match: RegExpExecArray) => Promise<Redirect>;

const segment = (match: RegExpExecArray, index: number) => decodeSegment(match[index]!);

/**
 * Every mutation the dashboard offers, each one call to a public operation of the FirmQueue
 * (queues, failedJobs, recurring) — the dashboard has no SQL of its own, so the semaphores and
 * the stale-worker guard those operations keep hold here too.
 */
const ACTIONS: ReadonlyArray<readonly [RegExp, Action]> = [
  [
    /^\/queues\/([^/]+)\/pause$/,
    async (context, _form, match) => {
      await context.firm.queues.pause(segment(match, 1));
      return back(context, `/queues/${match[1]}`, { notice: "paused" });
    },
  ],
  [
    /^\/queues\/([^/]+)\/resume$/,
    async (context, _form, match) => {
      await context.firm.queues.resume(segment(match, 1));
      return back(context, `/queues/${match[1]}`, { notice: "resumed" });
    },
  ],
  [
    /^\/queues\/([^/]+)\/clear$/,
    async (context, form, match) => {
      confirmed(form);
      const cleared = await context.firm.queues.clear(segment(match, 1));
      return back(context, `/queues/${match[1]}`, { notice: "cleared", n: cleared });
    },
  ],
  [
    /^\/jobs\/(\d+)\/retry$/,
    async (context, _form, match) => {
      const count = await context.firm.failedJobs.retry(Number(match[1]));
      return back(context, `/jobs/${match[1]}`, { notice: "retried", n: count });
    },
  ],
  [
    /^\/jobs\/(\d+)\/delete$/,
    async (context, _form, match) => {
      const count = await context.firm.failedJobs.delete(Number(match[1]));
      return back(context, "/failed", { notice: "deleted", n: count });
    },
  ],
  [
    /^\/failed\/retry$/,
    async (context, form) => {
      const count = await context.firm.failedJobs.retry(selectedIds(form));
      return back(context, "/failed", { ...filterOf(form), notice: "retried", n: count });
    },
  ],
  [
    /^\/failed\/delete$/,
    async (context, form) => {
      const count = await context.firm.failedJobs.delete(selectedIds(form));
      return back(context, "/failed", { ...filterOf(form), notice: "deleted", n: count });
    },
  ],
  [
    /^\/failed\/retry-all$/,
    async (context, form) => {
      const count = await context.firm.failedJobs.retryAll(filterOf(form));
      return back(context, "/failed", { ...filterOf(form), notice: "retried", n: count });
    },
  ],
  [
    /^\/failed\/delete-all$/,
    async (context, form) => {
      confirmed(form);
      const count = await context.firm.failedJobs.deleteAll(filterOf(form));
      return back(context, "/failed", { ...filterOf(form), notice: "deleted", n: count });
    },
  ],
  [
    /^\/recurring\/([^/]+)\/run$/,
    async (context, _form, match) => {
      const jobId = await context.firm.recurring.runNow(segment(match, 1));
      return back(
        context,
        "/recurring",
        jobId === null ? { notice: "not-enqueued" } : { notice: "enqueued", n: jobId },
      );
    },
  ],
];

/** Run the action at `path`; null when no action has that path. Refusals of the operations become 409 pages. */
export async function runAction(context: PageContext, path: string, form: URLSearchParams): Promise<Redirect | null> {
  for (const [pattern, action] of ACTIONS) {
    const match = pattern.exec(path);
    if (!match) continue;
    try {
      return await action(context, form, match);
    } catch (error) {
      if (error instanceof PageError) throw error;
      if (error instanceof FirmQueueError) throw new PageError(409, error.message);
      throw error;
    }
  }
  return null;
}

function back(context: PageContext, path: string, params: Record<string, string | number | undefined>): Redirect {
  return { location: href(context, path, params) };
}

function confirmed(form: URLSearchParams): void {
  if (form.get("confirm") !== "yes") throw new PageError(400, "This action needs its confirmation box ticked.");
}

function selectedIds(form: URLSearchParams): number[] {
  const only = form.get("only");
  const texts = only ? [only] : form.getAll("ids");
  if (texts.length === 0) throw new PageError(400, "No job was selected.");
  return texts.map((text) => {
    if (!/^\d{1,15}$/.test(text)) throw new PageError(400, `Not a job id: ${JSON.stringify(text)}`);
    return Number(text);
  });
}

function filterOf(form: URLSearchParams): { queue?: string; name?: string } {
  const queue = form.get("queue")?.trim();
  const name = form.get("name")?.trim();
  return { ...(queue ? { queue } : {}), ...(name ? { name } : {}) };
}
