import type { Db } from "../database/dialect.js";
import { markBudgetsWaiting } from "../models/rate-budget.js";
import { insertThrottledExecutions, type ThrottledJob } from "../models/throttled-execution.js";

/** Due jobs whose budgets already have their rows go to wait for them (a promotion from blocked). */
export async function waitForBudget(trx: Db, jobs: readonly ThrottledJob[], now: Date): Promise<void> {
  await markBudgetsWaiting(
    trx,
    jobs.map((job) => job.budgetKey),
    now,
  );
  await insertThrottledExecutions(trx, jobs, now);
}
