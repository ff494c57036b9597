import type { Database } from "../database/connection.js";
import type { JobPolicies } from "../definitions/job-policies.js";
import type { Logger } from "../logger.js";
import { failOrphanedClaims, pruneDeadProcesses, removeClaimsOfGoneJobs } from "./crash-recovery.js";
import { Poller } from "./poller.js";
import { heartbeatOwnProcesses } from "../models/process.js";

/**
 * A supervisor's maintenance loop: every `interval` ms it prunes processes whose heartbeat is
 * older than the alive threshold (their claims fail with ProcessPrunedError), removes claims
 * whose job row is gone, and fails claims whose process row is gone (ProcessMissingError). {@link recoverNow} runs one pass at once, as a
 * supervisor does when it boots.
 */
export class ProcessPruner extends Poller {
  private justRecovered = false;

  constructor(
    private readonly database: Database,
    private readonly policies: JobPolicies,
    private readonly settings: {
      readonly aliveThreshold: number;
      readonly interval: number;
      readonly ownProcessId: number;
      /**
       * The supervised processes run on this event loop (async mode): a stall here (a CPU-bound
       * job, SIGSTOP, a laptop asleep) delays their heartbeats and this pass alike, so they are
       * never pruned from here, only by other supervisors.
       */
      readonly supervisedInProcess: boolean;
    },
    private readonly logger: Logger,
    private readonly onError: (error: unknown) => void,
  ) {
    super({ logger, what: "process pruner" });
  }

  /** One pass: prune dead processes, then remove claims without a job and fail orphaned claims. */
  async recoverNow(): Promise<void> {
    const { ownProcessId, supervisedInProcess, aliveThreshold } = this.settings;
    // First say that we are alive: after a stall, other supervisors must not see us as dead
    // because our heartbeat timer has not run yet.
    await heartbeatOwnProcesses(this.database.db, ownProcessId, supervisedInProcess, this.database.clock.now());
    const pruned = await pruneDeadProcesses(
      this.database,
      this.policies,
      aliveThreshold,
      ownProcessId,
      supervisedInProcess,
    );
    for (const { process, failedJobIds, claimsLeft } of pruned) {
      const fields = {
        processId: process.id,
        kind: process.kind,
        name: process.name,
        pid: process.pid,
        hostname: process.hostname,
        lastHeartbeatAt: process.lastHeartbeatAt.toISOString(),
        jobIds: failedJobIds,
      };
      if (claimsLeft === 0)
        this.logger.warn("pruned a process that stopped heartbeating; its jobs failed with ProcessPrunedError", fields);
      else
        this.logger.warn(
          "a process that stopped heartbeating still locks some of its claims; its row stays until the next pass fails them too",
          { ...fields, claimsLeft },
        );
    }
    const jobless = await removeClaimsOfGoneJobs(this.database);
    if (jobless.length > 0) {
      this.logger.warn("claims whose job row is gone (deleted outside firm-queue) removed", { jobIds: jobless });
    }
    const orphaned = await failOrphanedClaims(this.database, this.policies);
    if (orphaned.length > 0) {
      this.logger.warn("claims held by no registered process failed with ProcessMissingError", { jobIds: orphaned });
    }
    this.justRecovered = true;
  }

  protected async poll(): Promise<number> {
    // A pass that just ran (at boot) need not run again when the loop starts.
    if (this.justRecovered) this.justRecovered = false;
    else await this.recoverNow();
    this.justRecovered = false;
    return this.settings.interval;
  }

  protected onPollError(error: unknown, repeated: boolean): number {
    if (!repeated) this.onError(error);
    return this.settings.interval;
  }
}
