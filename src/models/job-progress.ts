import type { Db } from "../database/dialect.js";

/** Store the latest progress of jobs: one UPDATE per job, whatever state the job is in now. */
export async function writeProgress(db: Db, values: readonly (readonly [number, string])[]): Promise<void> {
  for (const [jobId, json] of values) {
    await db.updateTable("firm_queue_jobs").set({ progress: json }).where("id", "=", jobId).execute();
  }
}

/** Store results of finished jobs (JSON text), in the transaction that records them finished. */
export async function writeResults(trx: Db, results: readonly (readonly [number, string])[]): Promise<void> {
  for (const [jobId, json] of results) {
    await trx.updateTable("firm_queue_jobs").set({ result: json }).where("id", "=", jobId).execute();
  }
}
