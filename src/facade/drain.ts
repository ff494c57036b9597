import { randomBytes } from "node:crypto";
import { claimJobs } from "../roles/claims.js";
import type { JobPolicies } from "../definitions/job-policies.js";
import type { Database } from "../database/connection.js";
import type { JobRegistry } from "../definitions/job-registry.js";
import { JobRunner } from "../roles/job-runner.js";
import type { Logger } from "../logger.js";
import { registerProcess } from "../models/process.js";
import { QueueSelector } from "../roles/queue-selector.js";
import { deregisterProcess } from "../processes/registration.js";
import { Heartbeat } from "../processes/heartbeat.js";
import type { Duration } from "../duration.js";
import { BudgetClaims } from "../roles/budget-claims.js";
import { scopeOfPatterns } from "../models/throttled-execution.js";

/** The longest nap of a drain waiting for a budget before it looks again (other workers may take the jobs). */
const BUDGET_NAP_MAX_MS = 1000;
/** The nap when a budget's reopening is not known (another claimer held it). */
const BUDGET_NAP_UNKNOWN_MS = 50;

/** Options of `firm.drain()`. */
export interface DrainOptions {
  /** Which queues to run, as for a worker. Default `"*"`. */
  readonly queues?: string | readonly string[] | undefined;
  /** Jobs run at once. Default 1: one after another, in claim order. */
  readonly concurrency?: number | undefined;
  /**
   * How often the drain refreshes its process row while it runs, as for `start()`. Default 60 s;
   * keep it below the `processAliveThreshold` of the supervisors running beside it.
   */
  readonly processHeartbeatInterval?: Duration | undefined;
}

/**
 * Run ready jobs in this process until none are left (including jobs those jobs enqueue), then
 * return how many ran. Jobs waiting for a rate-limit budget run within their budget like on any
 * worker; with `waitForBudgets` the drain waits for budgets to reopen until none of its queues
 * has a job waiting for one. The process registers like a worker for the duration, so a crash in
 * the middle is recovered like any other.
 */
export async function drainQueues(
  database: Database,
  registry: JobRegistry,
  policies: JobPolicies,
  settings: {
    queues: string | readonly string[];
    concurrency: number;
    heartbeatInterval: number;
    preserveFinishedJobs: boolean;
    logger: Logger;
    /** Stop claiming once this many have run (firm-queue/testing's guard against a job enqueuing itself forever). */
    limit?: number;
    /** Wait for full or closed budgets to reopen (default true); false returns when nothing can start now. */
    waitForBudgets?: boolean;
  },
): Promise<number> {
  const selector = new QueueSelector(settings.queues);
  const processId = await registerProcess(
    database.db,
    {
      kind: "Worker",
      name: `drain-${randomBytes(6).toString("hex")}`,
      metadata: { queues: selector.patterns, drain: true },
    },
    database.clock.now(),
  );
  // Heartbeat like any worker: a drain running a long job must not look dead to a supervisor.
  const heartbeat = new Heartbeat(
    database,
    processId,
    settings.heartbeatInterval,
    () =>
      settings.logger.warn("the drain's process row is gone (pruned as dead?); its next claim will be refused", {
        processId,
      }),
    (error) => settings.logger.warn("the drain's heartbeat failed", { processId, error }),
  );
  heartbeat.start();
  const runner = new JobRunner(database, registry, policies, processId, settings.preserveFinishedJobs, settings.logger);
  const signal = new AbortController().signal;
  const scope = scopeOfPatterns(selector.patterns);
  const definesRateLimits = registry.names().some((name) => registry.get(name)?.options.rateLimit);
  // Refreshed before every claim: a drain is short, and must see a queue limit set a moment ago.
  const budgets = new BudgetClaims(database, 0, definesRateLimits);
  let count = 0;
  try {
    for (;;) {
      if (count >= (settings.limit ?? Number.POSITIVE_INFINITY)) return count;
      await budgets.refresh();
      // Within budgets first, then the ordinary claim for the rest (leaving out the limited
      // queues). Every job claimed runs at once: both claims mark them all started.
      const budgeted = budgets.mayHaveWork(scope) ? await budgets.claim(scope, settings.concurrency, processId) : [];
      const rest = settings.concurrency - budgeted.length;
      const jobs = [
        ...budgeted,
        ...(await claimJobs(database, selector, rest, processId, {
          startNow: rest,
          onLaterError: (error) =>
            settings.logger.warn("claiming from a later queue failed; running what was claimed, then trying again", {
              error,
            }),
          adjustTargets: (targets) => budgets.withoutLimitedQueues(targets),
        })),
      ];
      if (jobs.length === 0) {
        if (settings.waitForBudgets === false || !(await budgets.waitingIn(scope))) return count;
        const nap = Math.min(BUDGET_NAP_MAX_MS, budgets.waitMs() ?? BUDGET_NAP_UNKNOWN_MS);
        await new Promise((resolve) => setTimeout(resolve, Math.max(nap, 5)));
        continue;
      }
      runner.claimed(jobs);
      await Promise.all(jobs.map((job) => runner.run(job, signal)));
      count += jobs.length;
    }
  } finally {
    await runner.flushProgress();
    await heartbeat.stopPolling();
    await deregisterProcess(database, policies, processId);
  }
}
