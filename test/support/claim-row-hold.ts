import type { Database } from "../../src/database/connection.js";

/**
 * Lock the claim row of `jobId` from a transaction of `database` (on SQLite, the whole database's
 * write lock), so the worker cannot write that job's outcome. Resolves once the lock is held, to
 * the function that ends the transaction and waits for it.
 */
export async function holdClaimRow(database: Database, jobId: number): Promise<() => Promise<void>> {
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const holding = database.claimTransaction(async (trx) => {
    await database.dialect
      .withRowLock(trx.selectFrom("firm_queue_claimed_executions").select("job_id").where("job_id", "=", jobId))
      .execute();
    locked();
    await released;
  });
  await Promise.race([isLocked, holding]);
  return async () => {
    release();
    await holding;
  };
}
