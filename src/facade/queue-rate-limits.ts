import type { Database } from "../database/connection.js";
import type { Duration } from "../duration.js";
import { ConfigurationError } from "../errors.js";
import { checkRateLimit, queueBudgetKey } from "../definitions/rate-limit-options.js";
import { deleteBudget, upsertQueueBudget } from "../models/rate-budget.js";
import { checkQueueName, rejectUnknownKeys } from "../option-checks.js";

/** What `firm.queues.setRateLimit()` takes: at most `limit` job starts of the queue in any window of `period`. */
export interface QueueRateLimit {
  /** Starts allowed in any window of `period`: a whole number of at least 1. */
  readonly limit: number;
  /** The window's length: milliseconds or a string such as `"1s"`; at least 100 ms. */
  readonly period: Duration;
}

const KEYS = new Set(["limit", "period"]);

/**
 * Store a queue's rate limit (docs/rate-limits.md): every running worker reads it within one
 * polling interval and from then on takes the queue's jobs only within the budget. Setting it
 * again changes the limit; the starts already counted stay counted. Bad input is a
 * ConfigurationError naming the option, and nothing is written.
 */
export async function setQueueRateLimit(open: () => Promise<Database>, name: unknown, options: unknown): Promise<void> {
  const queue = checkQueueName(name, "queues.setRateLimit queue");
  if (typeof options !== "object" || options === null || Array.isArray(options))
    throw new ConfigurationError('queues.setRateLimit options must be an object such as { limit: 10, period: "1s" }');
  rejectUnknownKeys(options, KEYS, "queues.setRateLimit option");
  const { limit, periodMs } = checkRateLimit(options as QueueRateLimit, "queues.setRateLimit option");
  const database = await open();
  await database.writeTransaction((trx) =>
    upsertQueueBudget(trx, database.dialect, queueBudgetKey(queue), queue, limit, periodMs, database.clock.now()),
  );
}

/** Remove a queue's rate limit and its start log; returns whether the queue had one. */
export async function clearQueueRateLimit(open: () => Promise<Database>, name: unknown): Promise<boolean> {
  const queue = checkQueueName(name, "queues.clearRateLimit queue");
  const database = await open();
  return database.writeTransaction((trx) => deleteBudget(trx, queueBudgetKey(queue)));
}
