import type { Database } from "../database/connection.js";
import type { JobPolicies } from "../definitions/job-policies.js";
import { claimedJobIds, releaseClaims } from "../lifecycle/claimed-jobs.js";
import { deleteProcess } from "../models/process.js";

/**
 * Take a process out of the registry as it stops: the claims it still holds go back in line
 * without counting an attempt (they were not finished in time), then its row is deleted. Returns
 * the ids of the jobs released. The claims of `keep` stay: jobs that ran but whose outcome could
 * not be recorded must not run again unrecorded; with the row gone, crash recovery fails them
 * (ProcessMissingError) and their retry policy decides.
 */
export async function deregisterProcess(
  database: Database,
  policies: JobPolicies,
  processId: number,
  keep: readonly number[] = [],
): Promise<number[]> {
  const released =
    keep.length === 0
      ? await releaseClaims(database, policies, processId)
      : await releaseClaims(
          database,
          policies,
          processId,
          (await claimedJobIds(database.db, processId)).filter((jobId) => !keep.includes(jobId)),
        );
  await deleteProcess(database.db, processId);
  return released;
}
