import type { JobPolicies } from "../definitions/job-policies.js";
import type { Database } from "../database/connection.js";
import type { Dialect } from "../database/dialect.js";
import type { JobMoves } from "./job-moves.js";

/**
 * What any path that moves a job between states needs besides its transaction: the dialect
 * (taking a slot and promoting blocked jobs lock rows) and the policies (concurrency limits,
 * retry policies) of the job definitions this process knows. Build one with {@link dispatchContext}.
 */
export interface DispatchContext {
  readonly dialect: Dialect;
  readonly policies: JobPolicies;
  /** Where the jobs this transaction blocks and unblocks are noted for the job events, when anyone listens. */
  readonly moves?: JobMoves;
}

/** The context for moving jobs on `database` with this FirmQueue's job policies (noting moves in `moves`). */
export function dispatchContext(database: Database, policies: JobPolicies, moves?: JobMoves): DispatchContext {
  return moves === undefined ? { dialect: database.dialect, policies } : { dialect: database.dialect, policies, moves };
}
