import type { Db } from "../database/dialect.js";
import type { BlockedJob } from "../models/blocked-execution.js";
import type { DispatchContext } from "./dispatch-context.js";
import type { DispatchableJob } from "../models/job.js";
import { compareKeys } from "./semaphore-release.js";
import { acquireSemaphore } from "../models/semaphore.js";

/** Where due jobs with a concurrency key go. */
export interface Admission {
  /** Took a slot (from the semaphore row `semaphoreId`). */
  readonly ready: (DispatchableJob & { readonly semaphoreId: number })[];
  /** No slot free; they wait. */
  readonly blocked: BlockedJob[];
  /** No slot free and their definition discards on conflict. */
  readonly discarded: DispatchableJob[];
}

/**
 * Take a slot for each due job with a concurrency key. Keys are visited in key order (so
 * transactions lock semaphore rows in one order and cannot deadlock on them), and the jobs of
 * one key in the order given. Once a key has no slot left, the rest of its jobs in this batch
 * conflict without asking again.
 */
export async function admitThroughSemaphores(
  trx: Db,
  jobs: readonly DispatchableJob[],
  now: Date,
  context: DispatchContext,
): Promise<Admission> {
  const admission: Admission = { ready: [], blocked: [], discarded: [] };
  const byKey = new Map<string, DispatchableJob[]>();
  for (const job of jobs) {
    const key = job.concurrencyKey!;
    const list = byKey.get(key);
    if (list) list.push(job);
    else byKey.set(key, [job]);
  }
  for (const key of [...byKey.keys()].sort(compareKeys)) {
    let full = false;
    for (const job of byKey.get(key)!) {
      const limit = context.policies.limitFor(job.className, key);
      const semaphoreId = full ? null : await acquireSemaphore(trx, context.dialect, key, limit, now);
      if (semaphoreId !== null) {
        admission.ready.push({ ...job, semaphoreId });
        continue;
      }
      full = true;
      if (limit.onConflict === "drop") {
        admission.discarded.push(job);
      } else {
        admission.blocked.push({ ...job, concurrencyKey: key, expiresAt: new Date(now.getTime() + limit.duration) });
      }
    }
  }
  return admission;
}
