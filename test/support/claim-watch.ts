// Samples the claims table from outside the hosts while a multi-host test runs, and collects
// every moment an invariant was broken: a claim whose process row is gone (a pruned or missing
// process holding a job: two "live" owners of it), a claim by a process the test saw pruned, or
// more live claims of a limited job than its limit.

import type { Db } from "../../src/database/dialect.js";

/** Ids of the process rows a host's `firm-queue start` (pid) registered: its supervisor and the roles under it. */
export async function hostProcessIds(db: Db, pid: number): Promise<number[]> {
  const supervisors = await db.selectFrom("firm_queue_processes").select("id").where("pid", "=", pid).execute();
  const ids = supervisors.map((row) => Number(row.id));
  if (ids.length === 0) return [];
  const children = await db.selectFrom("firm_queue_processes").select("id").where("supervisor_id", "in", ids).execute();
  return [...new Set([...ids, ...children.map((row) => Number(row.id))])];
}

export class ClaimWatch {
  private readonly found: string[] = [];
  private watched: readonly number[] = [];
  private pruned = false;
  private running = false;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly limits: { readonly limitedJob: string; readonly limit: number },
  ) {}

  /** How many claims the given processes hold now. */
  async claimsOf(processIds: readonly number[]): Promise<number> {
    if (processIds.length === 0) return 0;
    return (
      await this.db
        .selectFrom("firm_queue_claimed_executions")
        .select("job_id")
        .where("process_id", "in", processIds)
        .execute()
    ).length;
  }

  /** Sample every 100 ms; `watched`: the process ids of the host about to be cut off. */
  start(watched: readonly number[]): void {
    this.watched = watched;
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        await this.sample().catch((error: unknown) => this.found.push(`sampling failed: ${String(error)}`));
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
  }

  /** From now on, any claim by a watched process is a violation: the test saw its rows pruned. */
  markPruned(): void {
    this.pruned = true;
  }

  violations(): string[] {
    return [...new Set(this.found)];
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  private async sample(): Promise<void> {
    const claims = await this.db
      .selectFrom("firm_queue_claimed_executions as claim")
      .innerJoin("firm_queue_jobs as job", "job.id", "claim.job_id")
      .leftJoin("firm_queue_processes as process", "process.id", "claim.process_id")
      .select(["claim.job_id", "claim.process_id", "job.class_name", "process.id as live"])
      .execute();
    let limited = 0;
    for (const claim of claims) {
      const owner = claim.process_id === null ? null : Number(claim.process_id);
      if (claim.live === null) this.found.push(`job ${claim.job_id} claimed by process ${owner}, which has no row`);
      if (this.pruned && owner !== null && this.watched.includes(owner))
        this.found.push(`job ${claim.job_id} claimed by pruned process ${owner}`);
      if (claim.live !== null && claim.class_name === this.limits.limitedJob) limited++;
    }
    if (limited > this.limits.limit)
      this.found.push(`${limited} live claims of ${this.limits.limitedJob}, limit ${this.limits.limit}`);
  }
}
