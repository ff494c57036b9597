import type { Database } from "../database/connection.js";
import type { JobPolicies } from "../definitions/job-policies.js";
import { releaseClaims } from "../lifecycle/claimed-jobs.js";
import { deleteProcess } from "../models/process.js";

/**
 * Take a process out of the registry as it stops: the claims it still holds go back in line
 * without counting an attempt (they were not finished in time), then its row is deleted. Returns
 * the ids of the jobs released.
 */
export async function deregisterProcess(
  database: Database,
  policies: JobPolicies,
  processId: number,
): Promise<number[]> {
  const released = await releaseClaims(database, policies, processId);
  await deleteProcess(database.db, processId);
  return released;
}
