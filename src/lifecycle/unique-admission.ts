import type { Db } from "../database/dialect.js";
import type { JobKeyClaim, UniqueMode } from "../definitions/unique-options.js";
import type { DispatchContext } from "./dispatch-context.js";
import type { EnqueuedJob } from "./enqueue-result.js";
import { replaceWaitingJob } from "./job-replace.js";
import {
  deleteJobKeyRow,
  heldAfterFinish,
  holderStates,
  holdName,
  insertJobKeys,
  lockKeyHolders,
  type HolderState,
  type JobKeyRow,
} from "../models/job-key.js";

/** A job just inserted by enqueue (not yet dispatched) that carries a unique key. */
export interface KeyedJob {
  /** Its place in the enqueue call. */
  readonly index: number;
  readonly id: number;
  readonly jobName: string;
  readonly claim: JobKeyClaim;
  readonly arguments: string;
  readonly scheduledAt: Date;
}

/** What taking the keys decided. */
export interface KeyAdmission {
  /** By place in the call, the jobs that must not be created: duplicates and replacements. */
  readonly matched: Map<number, EnqueuedJob>;
  /**
   * Jobs of this same call whose arguments and time a later job of the call replaced (mode
   * `replace`), by place: what to write before they are dispatched.
   */
  readonly replacedInCall: Map<number, { arguments: string; scheduledAt: Date }>;
}

/** How often a job retries taking a key it found stale before settling for the holder it sees. */
const MAX_TAKEOVERS = 3;

/**
 * Take the unique keys of freshly inserted jobs, in call order. All keys are offered in one
 * INSERT that skips held ones (the unique index on `(job_name, key)` decides, so concurrent
 * enqueues of one key cannot both win); then the holders are read back, locked. A job whose row
 * came back got its key. For the others, the enqueuing job's mode decides against the holder's
 * state: a duplicate, a replacement of the waiting holder, or, when the holder no longer holds
 * the key for this mode (it runs, and the mode only counts waiting jobs; its hold after finishing
 * has passed; it is gone), a takeover: the stale row is deleted and the key taken again.
 */
export async function admitKeyedJobs(
  trx: Db,
  context: DispatchContext,
  jobs: readonly KeyedJob[],
  now: Date,
): Promise<KeyAdmission> {
  const admission: KeyAdmission = { matched: new Map(), replacedInCall: new Map() };
  if (jobs.length === 0) return admission;
  await insertJobKeys(trx, context.dialect, jobs.map(newKey), now);
  const holders = new Map<string, JobKeyRow>();
  for (const row of await lockKeyHolders(trx, context.dialect, jobs.map(keyOf)))
    holders.set(holdName(row.job_name, row.key), row);
  const inCall = new Map(jobs.map((job) => [job.id, job]));
  const outside = [...holders.values()].map((row) => Number(row.job_id)).filter((id) => !inCall.has(id));
  const states = await holderStates(trx, outside);
  for (const job of jobs) {
    const name = holdName(job.jobName, job.claim.key);
    for (let attempt = 0; ; attempt++) {
      const holder = holders.get(name);
      if (holder === undefined || Number(holder.job_id) === job.id) break;
      const holderId = Number(holder.job_id);
      const caller = inCall.get(holderId);
      const state: HolderState = caller !== undefined ? "waiting" : (states.get(holderId) ?? "gone");
      const verdict = judge(job.claim.mode, state, holder, now);
      if (verdict === "replace" && caller !== undefined) {
        admission.replacedInCall.set(caller.index, { arguments: job.arguments, scheduledAt: job.scheduledAt });
        admission.matched.set(job.index, { status: "replaced", id: holderId });
        break;
      }
      if (verdict === "replace" && (await replaceWaitingJob(trx, context, holderId, job, now))) {
        admission.matched.set(job.index, { status: "replaced", id: holderId });
        break;
      }
      if (verdict === "duplicate" || attempt >= MAX_TAKEOVERS) {
        admission.matched.set(job.index, { status: "duplicate", id: holderId });
        break;
      }
      // Stale (or a replace target that started running meanwhile): take the key over.
      await deleteJobKeyRow(trx, Number(holder.id));
      await insertJobKeys(trx, context.dialect, [newKey(job)], now);
      const [current] = await lockKeyHolders(trx, context.dialect, [keyOf(job)]);
      if (current === undefined) holders.delete(name);
      else holders.set(name, current);
      if (current !== undefined && Number(current.job_id) !== job.id) {
        const fresh = await holderStates(trx, [Number(current.job_id)]);
        states.set(Number(current.job_id), fresh.get(Number(current.job_id))!);
      }
    }
  }
  return admission;
}

/**
 * What a held key means for a new job in `mode`: the enqueuing job's mode decides which states
 * of the holder count, so one definition's jobs are judged alike whatever the holder was.
 */
function judge(mode: UniqueMode, state: HolderState, holder: JobKeyRow, now: Date): "duplicate" | "replace" | "stale" {
  if (state === "waiting") return mode === "replace" ? "replace" : "duplicate";
  if (state === "running") return mode === "running" || mode === "finished" ? "duplicate" : "stale";
  // Ended or deleted: only a hold after finishing, still running its period, counts.
  return mode === "finished" && heldAfterFinish(holder, now) ? "duplicate" : "stale";
}

function newKey(job: KeyedJob) {
  return { jobName: job.jobName, key: job.claim.key, jobId: job.id, mode: job.claim.mode, holdFor: job.claim.holdFor };
}

function keyOf(job: KeyedJob) {
  return { jobName: job.jobName, key: job.claim.key };
}
