import { inspect } from "node:util";
import type { WaitingJob } from "../models/waiting-jobs.js";

/**
 * Whether `actual` holds `expected`: equal values, or for plain objects every key of `expected`
 * matching in `actual` (more keys in `actual` are fine), for arrays the same length and each item
 * matching, for dates the same time. So `{ userId: 1 }` matches arguments `{ userId: 1, locale: "en" }`.
 */
export function matches(actual: unknown, expected: unknown): boolean {
  if (Object.is(actual, expected)) return true;
  if (expected instanceof Date) return actual instanceof Date && actual.getTime() === expected.getTime();
  if (Array.isArray(expected)) {
    return (
      Array.isArray(actual) &&
      actual.length === expected.length &&
      expected.every((item, i) => matches(actual[i], item))
    );
  }
  if (typeof expected === "object" && expected !== null) {
    if (typeof actual !== "object" || actual === null || Array.isArray(actual)) return false;
    return Object.entries(expected).every(
      ([key, value]) => Object.hasOwn(actual, key) && matches((actual as Record<string, unknown>)[key], value),
    );
  }
  return false;
}

/** One line per job, for failure messages: `#3 send-email on "mail" (scheduled for …) { userId: 1 }`. */
export function describeJobs(jobs: readonly WaitingJob[]): string {
  if (jobs.length === 0) return "  (nothing is enqueued)";
  return jobs
    .map((job) => {
      const when = job.state === "scheduled" && job.scheduledAt ? ` for ${job.scheduledAt.toISOString()}` : "";
      return `  #${job.id} ${job.name} on "${job.queue}", ${job.state}${when}: ${show(job.arguments)}`;
    })
    .join("\n");
}

/** A filter or arguments, written the way a reader compares them. */
export function show(value: unknown): string {
  return inspect(value, { depth: 6, breakLength: Number.POSITIVE_INFINITY, compact: true });
}
