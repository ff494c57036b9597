import type { Db } from "./dialect.js";
import type { JobsReadySignal } from "./jobs-ready.js";

/** Transactions that made jobs ready (wrote ready rows), noted by {@link noteReadyWritten}. */
const readyWriters = new WeakSet<Db>();

/**
 * Note that `trx` made jobs ready. Once it commits, this process's waiting workers are woken (see
 * {@link wakingAfterCommit}): a dependent released or a blocked job promoted by a finish, a retry
 * made ready, would otherwise wait for a worker's next poll on a database that cannot announce
 * new ready rows itself (SQLite, MariaDB).
 */
export function noteReadyWritten(trx: Db): void {
  readyWriters.add(trx);
}

/**
 * Run `work` in the transaction `begin` opens and, once it has committed, tell `signal` if the
 * last attempt wrote ready rows. Never before the commit: a worker woken earlier would not see
 * the rows yet, and would go back to sleep until its next poll.
 */
export async function wakingAfterCommit<T>(
  signal: JobsReadySignal,
  begin: (work: (trx: Db) => Promise<T>) => Promise<T>,
  work: (trx: Db) => Promise<T>,
): Promise<T> {
  let wroteReady = false;
  const result = await begin(async (trx) => {
    // A retried transaction runs `work` again, possibly in the same transaction object.
    readyWriters.delete(trx);
    const value = await work(trx);
    wroteReady = readyWriters.has(trx);
    return value;
  });
  if (wroteReady) signal.notify();
  return result;
}
