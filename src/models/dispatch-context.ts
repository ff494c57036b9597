import type { ConcurrencyRules } from "../concurrency-rules.js";
import type { Database } from "../database/connection.js";
import type { Dialect } from "../database/dialect.js";

/**
 * What any path that can make a job ready needs besides its transaction: the dialect (taking a
 * slot and promoting blocked jobs lock rows) and the concurrency limits of the job definitions
 * this process knows. Build one with {@link dispatchContext}.
 */
export interface DispatchContext {
  readonly dialect: Dialect;
  readonly concurrency: ConcurrencyRules;
}

/** The context for dispatching on `database` with this FirmQueue's concurrency rules. */
export function dispatchContext(database: Database, concurrency: ConcurrencyRules): DispatchContext {
  return { dialect: database.dialect, concurrency };
}
