import type { Db } from "../database/dialect.js";

/** The job whose concurrency slot is given up. */
export interface SlotHolder {
  readonly id: number;
  /** The job's name, which leads to its definition's concurrency limit. */
  readonly className: string;
  readonly concurrencyKey: string | null;
}

/**
 * MERGE POINT with the concurrency-controls branch: give up the concurrency slot `job` holds
 * and let the next blocked job of its key have it. Every path here that takes a job out of
 * ready/claimed without finishing it (a failed attempt, discarding ready jobs) calls this
 * exactly once per job, inside its transaction. Until that branch lands jobs hold no slots,
 * so there is nothing to release; the lead replaces this body with the semaphore release.
 */
export async function releaseConcurrencySlot(_trx: Db, _job: SlotHolder, _now: Date): Promise<void> {}
