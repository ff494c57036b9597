import type { JobPolicies } from "../definitions/job-policies.js";
import type { Database } from "../database/connection.js";
import type { Dialect } from "../database/dialect.js";

/**
 * What any path that moves a job between states needs besides its transaction: the dialect
 * (taking a slot and promoting blocked jobs lock rows) and the policies (concurrency limits,
 * retry policies) of the job definitions this process knows. Build one with {@link dispatchContext}.
 */
export interface DispatchContext {
  readonly dialect: Dialect;
  readonly policies: JobPolicies;
}

/** The context for moving jobs on `database` with this FirmQueue's job policies. */
export function dispatchContext(database: Database, policies: JobPolicies): DispatchContext {
  return { dialect: database.dialect, policies };
}
