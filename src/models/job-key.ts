import type { Selectable } from "kysely";
import type { Db, Dialect } from "../database/dialect.js";
import type { JobKeysTable } from "../database/schema.js";
import { toDate } from "../database/schema.js";

/** A held key, as stored. */
export type JobKeyRow = Selectable<JobKeysTable>;

/** A key to take for a job. */
export interface NewJobKey {
  readonly jobName: string;
  readonly key: string;
  readonly jobId: number;
  readonly mode: string;
  readonly holdFor: number | null;
}

/** Where the job holding a key is now, as far as keys care. */
export type HolderState = "waiting" | "running" | "ended" | "gone";

const CHUNK = 500;

/**
 * Try to take keys: one multi-row INSERT per chunk that skips rows whose `(job_name, key)` is
 * already held. The unique index decides, so two transactions taking one key at once cannot both
 * succeed; the loser waits for the winner to commit, then skips. Read the holders back with
 * {@link lockKeyHolders} to learn which jobs got their key.
 */
export async function insertJobKeys(trx: Db, dialect: Dialect, keys: readonly NewJobKey[], now: Date): Promise<void> {
  for (let start = 0; start < keys.length; start += CHUNK) {
    const rows = keys.slice(start, start + CHUNK).map((key) => ({
      job_name: key.jobName,
      key: key.key,
      job_id: key.jobId,
      mode: key.mode,
      hold_for: key.holdFor,
      created_at: now,
    }));
    await dialect.ignoringConflicts(trx.insertInto("firm_queue_job_keys").values(rows), ["job_name", "key"]).execute();
  }
}

/**
 * The rows holding `keys`, as committed now (see `withLatestRead`: the winner of a race this
 * transaction's INSERT waited for is visible). No exclusive lock: every enqueuer that met a
 * held key reads it, and exclusive locks on top of the shared one MariaDB's INSERT took would
 * deadlock them all.
 */
export async function lockKeyHolders(
  trx: Db,
  dialect: Dialect,
  keys: readonly { readonly jobName: string; readonly key: string }[],
): Promise<JobKeyRow[]> {
  const rows: JobKeyRow[] = [];
  const wanted = new Set(keys.map((key) => holdName(key.jobName, key.key)));
  const distinct = [...new Set(keys.map((key) => key.key))];
  // Both columns, so the read (and on MariaDB its locks) stays on the (job_name, key) index.
  const names = [...new Set(keys.map((key) => key.jobName))];
  for (let start = 0; start < distinct.length; start += CHUNK) {
    const found = await dialect
      .withLatestRead(
        trx
          .selectFrom("firm_queue_job_keys")
          .selectAll()
          .where("job_name", "in", names)
          .where("key", "in", distinct.slice(start, start + CHUNK))
          .orderBy("id"),
      )
      .execute();
    for (const row of found) if (wanted.has(holdName(row.job_name, row.key))) rows.push(row);
  }
  return rows;
}

/** One string naming a held key, for maps (never stored). */
export function holdName(jobName: string, key: string): string {
  return JSON.stringify([jobName, key]);
}

/** Drop one key row (a stale holder's), so the key can be taken again in this transaction. */
export async function deleteJobKeyRow(trx: Db, id: number): Promise<void> {
  await trx.deleteFrom("firm_queue_job_keys").where("id", "=", id).execute();
}

/**
 * Give back the keys of jobs that have ended. `finished`: they finished successfully, so keys
 * held in mode `finished` stay held until `hold_for` from `now`; every other key goes.
 */
export async function releaseJobKeys(trx: Db, jobIds: readonly number[], now: Date, finished = false): Promise<void> {
  if (jobIds.length === 0) return;
  for (let start = 0; start < jobIds.length; start += CHUNK) {
    const chunk = jobIds.slice(start, start + CHUNK);
    if (finished) {
      const held = await trx
        .selectFrom("firm_queue_job_keys")
        .select(["id", "hold_for"])
        .where("job_id", "in", chunk)
        .where("hold_for", "is not", null)
        .execute();
      for (const row of held) {
        const until = new Date(now.getTime() + Number(row.hold_for));
        await trx.updateTable("firm_queue_job_keys").set({ held_until: until }).where("id", "=", row.id).execute();
      }
      await trx.deleteFrom("firm_queue_job_keys").where("job_id", "in", chunk).where("hold_for", "is", null).execute();
    } else {
      await trx.deleteFrom("firm_queue_job_keys").where("job_id", "in", chunk).execute();
    }
  }
}

/** Whether a key row still holds its key at `now` after its job finished (mode `finished`). */
export function heldAfterFinish(row: JobKeyRow, now: Date): boolean {
  const until = toDate(row.held_until);
  return until !== null && until.getTime() > now.getTime();
}

/** Where each job is: waiting (ready, scheduled, blocked), running (claimed), ended, or gone. */
export async function holderStates(trx: Db, jobIds: readonly number[]): Promise<Map<number, HolderState>> {
  const states = new Map<number, HolderState>(jobIds.map((id) => [id, "gone"]));
  if (jobIds.length === 0) return states;
  const ids = [...new Set(jobIds)];
  const jobs = await trx
    .selectFrom("firm_queue_jobs as j")
    .leftJoin("firm_queue_claimed_executions as c", "c.job_id", "j.id")
    .leftJoin("firm_queue_failed_executions as f", "f.job_id", "j.id")
    .select(["j.id", "j.finished_at", "c.id as claimed", "f.id as failed"])
    .where("j.id", "in", ids)
    .execute();
  for (const job of jobs) {
    const state: HolderState =
      job.finished_at !== null || job.failed !== null ? "ended" : job.claimed !== null ? "running" : "waiting";
    states.set(Number(job.id), state);
  }
  return states;
}
