import type { Database } from "../database/connection.js";
import type { ClaimedJob } from "../database/claimed-job.js";
import { claimWithinBudgets } from "../lifecycle/budget-claim.js";
import { jobsWaitForBudget } from "../models/budget-backlog.js";
import { budgetOutlook, type BudgetOutlook } from "../models/rate-budget.js";
import type { ClaimTarget } from "../models/ready-execution.js";
import { inScope, type QueueScope } from "../models/throttled-execution.js";

const NOTHING: BudgetOutlook = { queues: new Map(), nextJobBudgetAt: null };

/**
 * A worker's view of the rate-limit budgets, and its budget claims (docs/rate-limits.md). The
 * outlook (queue budgets, the next time a job budget has work) is read once per `refreshMs`, not
 * per claim, so a worker with no budget anywhere pays one tiny query per polling interval and
 * its claims are the ordinary ones. Queues with a budget are left out of the ordinary claim and
 * taken only here, within their budget.
 */
export class BudgetClaims {
  private outlook = NOTHING;
  private readAt = Number.NEGATIVE_INFINITY;
  /** The earliest time a budget may have work for this worker; null: none known. */
  private nextAt: number | null = null;

  constructor(
    private readonly database: Database,
    private readonly refreshMs: number,
    /** Whether this process defines rate-limited jobs: then budgets are looked at on every claim. */
    private readonly definesRateLimits: boolean,
  ) {}

  /** Queues the ordinary claim must leave out (their jobs start only within their budget). */
  get limitedQueues(): ReadonlyMap<string, Date | null> {
    return this.outlook.queues;
  }

  /** Whether the outlook is older than the refresh interval. */
  refreshDue(): boolean {
    return performance.now() - this.readAt >= this.refreshMs;
  }

  /**
   * Whether a budget claim may find work now (else it is skipped, with no transaction). A job
   * budget's next opening, once known, is trusted until the outlook is read again: a budget that
   * became due sooner (a job entered it) shows in that read, within one refresh interval. With
   * nothing known, a process that defines rate-limited jobs looks on every claim.
   */
  mayHaveWork(scope: QueueScope): boolean {
    if (this.dueNow() || (this.definesRateLimits && this.nextAt === null)) return true;
    for (const queue of this.outlook.queues.keys()) if (inScope(scope, queue)) return true;
    return false;
  }

  /** Whether a job budget is known to have room now. */
  dueNow(): boolean {
    return this.nextAt !== null && this.nextAt <= this.database.clock.now().getTime();
  }

  /** Read the outlook again. */
  async refresh(): Promise<void> {
    this.outlook = await budgetOutlook(this.database.db);
    this.readAt = performance.now();
    const next = this.outlook.nextJobBudgetAt?.getTime() ?? null;
    if (next !== null && (this.nextAt === null || next < this.nextAt)) this.nextAt = next;
  }

  /** Milliseconds until a budget may have work (for the poll's sleep); null: nothing known. */
  waitMs(): number | null {
    if (this.nextAt === null) return null;
    return Math.max(0, this.nextAt - this.database.clock.now().getTime());
  }

  /**
   * Claim up to `limit` jobs within their budgets from the queues of `scope` (call it when
   * {@link mayHaveWork} says so), and note when budgets open next.
   */
  async claim(scope: QueueScope, limit: number, processId: number): Promise<ClaimedJob[]> {
    if (limit <= 0) return [];
    const now = this.database.clock.now();
    const queues = [...this.outlook.queues.keys()].filter((queue) => inScope(scope, queue));
    const claim = await this.database.claimTransaction((trx) =>
      claimWithinBudgets(trx, this.database.dialect, scope, queues, limit, processId, () => this.database.clock.now()),
    );
    // Every slot filled: budgets may have more at once. Otherwise wait for the first to open.
    this.nextAt = claim.jobs.length >= limit ? now.getTime() : (claim.nextOpenAt?.getTime() ?? null);
    return claim.jobs;
  }

  /** Whether a job of `scope` (in a queue not paused) waits for a budget, now or later. */
  async waitingIn(scope: QueueScope): Promise<boolean> {
    const queues = [...this.outlook.queues.keys()].filter((queue) => inScope(scope, queue));
    return jobsWaitForBudget(this.database.db, scope, queues);
  }

  /** The targets of the ordinary claim without the queues that have a budget. */
  withoutLimitedQueues(targets: readonly ClaimTarget[]): readonly ClaimTarget[] {
    const limited = this.outlook.queues;
    if (limited.size === 0) return targets;
    const names = [...limited.keys()];
    return targets
      .filter((target) => target.queue === undefined || !limited.has(target.queue))
      .map((target) => (target.queue === undefined ? { exclude: [...target.exclude, ...names] } : target));
  }
}
