/**
 * The chaos suite's run log and what it proves. Every process of the run appends one line per
 * event to a single file with O_APPEND (one write per line), so the file's line order is a
 * happens-before order. The test brackets each SIGKILL it sends with a `killing` line before the
 * signal and a `kill` line after it: the process died somewhere between the two. The `kill` line
 * alone is no bound: a loaded machine can hold the test up between the signal and its write for
 * long enough that the process is dead, its claims recovered, and another process has started its
 * key's next job before the line lands (seen once: docs/reliability.md, "A false over-limit").
 *
 * | line | written by | when |
 * | --- | --- | --- |
 * | `start <job> <pid> <key\|-> <attempt> [tag]` | the handler | as it begins; the tag is `callback=<batch>:<name>` for a batch's callback, `budget=<key>@<claim ms>/<host ms>` for a rate-limited job (its budget, the start time its claim recorded on the database clock, and the host's clock at the start) |
 * | `end <job> <pid> <key\|->` | the handler | its work is done, just before it returns |
 * | `fail <job> <pid> <key\|->` | the handler | just before it throws (a planned failure) |
 * | `abort <job> <pid> <key\|->` | the handler | just before it throws because its AbortSignal fired |
 * | `up <pid>` | a supervisor | registered (`onStart`) |
 * | `ready <pid> <kind> <ppid>` | a worker or dispatcher | registered (`on…Start`) |
 * | `uncaught <pid> <message>` | any process of the run | an uncaught exception is about to end it |
 * | `exit <pid> <code>` | any process of the run | in its `exit` event, the last thing it does |
 * | `killing <pid> <what>` | the test | just before it sends SIGKILL |
 * | `kill <pid> <what>` | the test | right after SIGKILL was sent |
 * | `fault <kind> <phase>` | the test | a fault begins or ends (for reading the log; no rule uses it) |
 */

import { KillWindows } from "./chaos-kill-window.js";

/** One way the run broke a guarantee, with the line number (1-based) where it showed. */
export interface Violation {
  readonly kind:
    | "rerun-while-running"
    | "rerun-after-success"
    | "over-limit"
    | "dependent-early"
    | "callback-count"
    | "rate-window"
    | "crash"
    | "unmatched";
  readonly line: number;
  readonly detail: string;
}

/** The workflows and limits a run's jobs were written with, for the rules that need them. */
export interface ChaosPlan {
  /** Runs of one concurrency key allowed at once. */
  readonly keyLimit: number;
  /** Each flow: its parent, which may start only once every child has finished. */
  readonly flows?: readonly { readonly parent: number; readonly children: readonly number[] }[];
  /** Each batch: its jobs, and the callbacks (job names) it enqueues once, after all of them ended. */
  readonly batches?: readonly {
    readonly id: number;
    readonly members: readonly number[];
    readonly callbacks: readonly string[];
  }[];
  /** The rate-limited job's budgets: at most `limit` starts in any window of `periodMs`. */
  readonly rate?: { readonly limit: number; readonly periodMs: number };
}

/** What the log shows. */
export interface ChaosLogReport {
  readonly violations: Violation[];
  /** Job ids with at least one run that ended successfully. */
  readonly succeeded: Set<number>;
  /** Every job id that started at least once. */
  readonly started: Set<number>;
  readonly counts: {
    starts: number;
    ends: number;
    fails: number;
    aborts: number;
    kills: number;
    exits: number;
    reruns: number;
    /** Starts of rate-limited jobs (every budget). */
    rateStarts: number;
    /** Callback jobs seen (distinct job ids). */
    callbacks: number;
    /**
     * How far the latest rate-limited claim time ran ahead of the host clock at its handler's
     * start (0 when none did): on one host, how far a process's measure of the database clock
     * was ahead. Reported, not judged.
     */
    claimAheadMs: number;
  };
  /** Job ids of batch callbacks seen in the log, by batch id and callback name. */
  readonly callbacks: Map<number, Map<string, Set<number>>>;
}

type RunState = "running" | "ended" | "failed" | "aborted" | "died";

interface Run {
  readonly job: number;
  readonly pid: number;
  readonly key: string | null;
  readonly line: number;
  state: RunState;
  /** The run ended, then its process was killed or crashed: its outcome may not have been recorded. */
  diedAfterEnd: boolean;
}

/**
 * Check the log against the guarantees:
 * - a job starts again only if its previous run is over: it failed, stopped on its AbortSignal,
 *   or its process died (killed, crashed, or exited) while running it; a run that succeeded is
 *   never repeated unless its process was killed or crashed before the outcome could be written;
 * - no more than `limit` runs of one concurrency key at once (a dead process's runs end with it);
 * - a start that breaks either rule only if a process being killed was still running its job is
 *   a violation only once that process is seen alive after it (see {@link KillWindows});
 * - a registered worker or dispatcher never exits with a non-zero code on its own;
 * - with a `plan`: a flow's parent and a batch's callback first start after each of their children
 *   (or the batch's jobs) ended successfully in its last run, and those never start again after
 *   it; each batch's callbacks run as one job each (never two, never none); and no rate-limited
 *   budget has more than its limit of starts in any window of its period (see
 *   {@link windowViolations}). A plain number is the key limit alone.
 */
export function analyseChaosLog(lines: readonly string[], plan: ChaosPlan | number): ChaosLogReport {
  const { keyLimit: limit, flows = [], batches = [], rate } = typeof plan === "number" ? { keyLimit: plan } : plan;
  const violations: Violation[] = [];
  const last = new Map<number, Run>();
  const live = new Map<number, Set<Run>>(); // pid → runs since its last death
  const running = new Map<string, Set<Run>>(); // key → runs holding it
  const registered = new Set<number>();
  const uncaught = new Map<number, string>(); // pid → the error that is ending it
  const succeeded = new Set<number>();
  const started = new Set<number>();
  const counts = {
    starts: 0,
    ends: 0,
    fails: 0,
    aborts: 0,
    kills: 0,
    exits: 0,
    reruns: 0,
    rateStarts: 0,
    callbacks: 0,
    claimAheadMs: 0,
  };
  const waits = new Waits(flows, batches, last, (violation) => violations.push(violation));
  const budgets = new Map<string, { at: number; line: number; job: number }[]>();
  const windows = new KillWindows((violation) => violations.push(violation));

  const settle = (run: Run, state: RunState) => {
    run.state = state;
    if (run.key !== null) running.get(run.key)?.delete(run);
  };
  const die = (pid: number, abnormal: boolean) => {
    for (const run of live.get(pid) ?? []) {
      if (run.state === "running") settle(run, "died");
      else if (run.state === "ended" && abnormal) run.diedAfterEnd = true;
    }
    live.delete(pid);
    registered.delete(pid);
  };

  lines.forEach((text, index) => {
    const line = index + 1;
    const [event, a, b, c] = text.split(" ");
    // Whoever wrote this line was alive when it was written.
    const writer = Number(WRITTEN_BY_SECOND.has(event!) ? b : a);
    if (PROCESS_LINES.has(event!)) windows.wrote(writer);
    switch (event) {
      case "start": {
        const job = Number(a);
        const pid = Number(b);
        const key = c === "-" || c === undefined ? null : c;
        const tag = text.split(" ")[5];
        counts.starts++;
        started.add(job);
        if (tag?.startsWith("budget=")) {
          counts.rateStarts++;
          const [budget, times] = tag.slice("budget=".length).split("@");
          const [at, host] = (times ?? "").split("/").map(Number);
          if (!budgets.has(budget!)) budgets.set(budget!, []);
          budgets.get(budget!)!.push({ at: at!, line, job });
          // The claim came before the handler began: a claim time later than the handler's host
          // clock is the claiming process's measure of the database clock running ahead (one host).
          if (Number.isFinite(at) && Number.isFinite(host))
            counts.claimAheadMs = Math.max(counts.claimAheadMs, at! - host!);
        }
        if (tag?.startsWith("callback=")) waits.callbackStarted(job, tag.slice("callback=".length), line);
        const previous = last.get(job);
        if (previous) {
          counts.reruns++;
          if (previous.state === "running") {
            const detail = `job ${job} started in pid ${pid} while its run in pid ${previous.pid} (line ${previous.line}) was still going, and that process had not died`;
            windows.judge({ kind: "rerun-while-running", line, detail }, [previous], 1, pid);
          } else if (previous.state === "ended" && !previous.diedAfterEnd) {
            const detail = `job ${job} started again in pid ${pid} after it succeeded in pid ${previous.pid} (line ${previous.line}), which was neither killed nor crashed`;
            windows.judge({ kind: "rerun-after-success", line, detail }, [previous], 1, pid);
          }
        }
        if (key !== null) {
          const holders = running.get(key) ?? new Set<Run>();
          running.set(key, holders);
          if (holders.size >= limit) {
            const others = [...holders].map((run) => `job ${run.job} in pid ${run.pid} (line ${run.line})`).join(", ");
            const detail = `job ${job} of key ${key} started in pid ${pid} while ${others} held the key (limit ${limit})`;
            windows.judge({ kind: "over-limit", line, detail }, [...holders], limit, pid);
          }
        }
        waits.started(job, line);
        const run: Run = { job, pid, key, line, state: "running", diedAfterEnd: false };
        last.set(job, run);
        if (key !== null) running.get(key)!.add(run);
        if (!live.has(pid)) live.set(pid, new Set());
        live.get(pid)!.add(run);
        break;
      }
      case "end":
      case "fail":
      case "abort": {
        const job = Number(a);
        const pid = Number(b);
        const run = last.get(job);
        if (!run || run.pid !== pid || run.state !== "running") {
          violations.push({
            kind: "unmatched",
            line,
            detail: `"${text}" matches no running run of job ${job} in pid ${pid}`,
          });
          break;
        }
        if (event === "end") {
          counts.ends++;
          succeeded.add(job);
          settle(run, "ended");
        } else if (event === "fail") {
          counts.fails++;
          settle(run, "failed");
        } else {
          counts.aborts++;
          settle(run, "aborted");
        }
        break;
      }
      case "ready":
        registered.add(Number(a));
        break;
      case "killing":
        windows.killing(Number(a));
        break;
      case "kill":
        counts.kills++;
        die(Number(a), true);
        windows.killed(Number(a));
        break;
      case "exit": {
        const pid = Number(a);
        const code = Number(b);
        counts.exits++;
        if (code !== 0 && registered.has(pid)) {
          const why = uncaught.get(pid);
          violations.push({
            kind: "crash",
            line,
            detail: `registered process ${pid} exited with code ${code} without being killed${why ? `: ${why}` : ""}`,
          });
        }
        die(pid, code !== 0);
        uncaught.delete(pid);
        break;
      }
      case "uncaught":
        uncaught.set(Number(a), text.split(" ").slice(2).join(" "));
        break;
      case "up":
      case "fault":
        break;
      default:
        violations.push({ kind: "unmatched", line, detail: `unknown line "${text}"` });
    }
  });
  waits.finish(lines.length);
  counts.callbacks = waits.callbackJobs();
  if (rate) for (const [budget, starts] of budgets) windowViolations(budget, starts, rate, violations);
  // Verdicts held for a kill window are reported late: put every violation back in line order.
  violations.sort((x, y) => x.line - y.line);
  return { violations, succeeded, started, counts, callbacks: waits.callbacks };
}

/**
 * A budget's starts against its window: at most `limit` in any window of `periodMs`, measured on
 * the times the claims recorded (database clock). The budget claim counts the starts after
 * `now − period`, with `now` read under the budget's lock, and records its own start at or after
 * that `now`; so two starts `limit` apart in time order are `periodMs` or more apart, exactly,
 * whatever the order the log lines came in (it is not the claims' order: the handler writes its
 * line after the claim's commit, and a stalled commit can hold it up for seconds).
 */
function windowViolations(
  budget: string,
  starts: readonly { at: number; line: number; job: number }[],
  rate: { limit: number; periodMs: number },
  violations: Violation[],
): void {
  for (const start of starts)
    if (!Number.isFinite(start.at))
      violations.push({
        kind: "rate-window",
        line: start.line,
        detail: `job ${start.job} of budget ${budget} started with no start time recorded by its claim`,
      });
  const timed = starts.filter((start) => Number.isFinite(start.at)).sort((x, y) => x.at - y.at || x.line - y.line);
  for (let i = rate.limit; i < timed.length; i++) {
    const first = timed[i - rate.limit]!;
    const start = timed[i]!;
    if (start.at - first.at >= rate.periodMs) continue;
    const window = timed.slice(i - rate.limit, i + 1).map((run) => `job ${run.job} at ${run.at} (line ${run.line})`);
    violations.push({
      kind: "rate-window",
      line: start.line,
      detail: `${rate.limit + 1} starts of budget ${budget} within ${start.at - first.at} ms, limit ${rate.limit} per ${rate.periodMs} ms: ${window.join(", ")}`,
    });
  }
}

/** A job that may start only after others have finished: a flow's parent, or a batch's callback. */
interface Waiter {
  readonly what: string;
  readonly prerequisites: readonly number[];
}

/**
 * The ordering rules of flows and batches: a parent's first start, and each batch callback's,
 * comes after every one of its children (or the batch's jobs) ended successfully, as its last run;
 * and none of those starts again afterwards (a child run again was not finished, so its parent
 * started too early). Each batch enqueues each of its callbacks as exactly one job.
 */
class Waits {
  /** Job id of a parent → what it waits for. */
  private readonly parents = new Map<number, Waiter>();
  /** Batch id → its jobs and callbacks. */
  private readonly batches = new Map<number, { members: readonly number[]; callbacks: readonly string[] }>();
  /** Jobs a waiter has started after: a prerequisite → the waiter's description and start line. */
  private readonly closed = new Map<number, { what: string; line: number }>();
  private readonly firstStarts = new Set<number>();
  /** Callback jobs of each batch, by callback name. */
  readonly callbacks = new Map<number, Map<string, Set<number>>>();

  constructor(
    flows: NonNullable<ChaosPlan["flows"]>,
    batches: NonNullable<ChaosPlan["batches"]>,
    private readonly runs: ReadonlyMap<
      number,
      { readonly state: RunState; readonly pid: number; readonly line: number }
    >,
    private readonly report: (violation: Violation) => void,
  ) {
    for (const flow of flows)
      this.parents.set(flow.parent, { what: `parent ${flow.parent}`, prerequisites: flow.children });
    for (const batch of batches) this.batches.set(batch.id, batch);
  }

  /** A callback job named its batch and callback (`<batch>:<name>`) as it started. */
  callbackStarted(job: number, tag: string, line: number): void {
    const [batchText, name] = tag.split(":");
    const batchId = Number(batchText);
    const batch = this.batches.get(batchId);
    if (!batch || !name || !batch.callbacks.includes(name)) {
      this.report({ kind: "callback-count", line, detail: `job ${job} ran as callback ${tag}, which no batch has` });
      return;
    }
    if (!this.callbacks.has(batchId)) this.callbacks.set(batchId, new Map());
    const jobs = this.callbacks.get(batchId)!;
    if (!jobs.has(name)) jobs.set(name, new Set());
    const seen = jobs.get(name)!;
    if (!seen.has(job) && seen.size > 0)
      this.report({
        kind: "callback-count",
        line,
        detail: `batch ${batchId}'s ${name} enqueued twice: job ${job} started, and job ${[...seen].join(", ")} before it`,
      });
    seen.add(job);
    if (!this.parents.has(job))
      this.parents.set(job, { what: `callback ${job} (${name} of batch ${batchId})`, prerequisites: batch.members });
  }

  /** `job` starts at `line` (before its run is recorded as the last one). */
  started(job: number, line: number): void {
    const closed = this.closed.get(job);
    if (closed)
      this.report({
        kind: "dependent-early",
        line,
        detail: `job ${job} started again after ${closed.what} had started (line ${closed.line}), which waits for it`,
      });
    const waiter = this.parents.get(job);
    if (!waiter || this.firstStarts.has(job)) return;
    this.firstStarts.add(job);
    for (const prerequisite of waiter.prerequisites) {
      const run = this.runs.get(prerequisite);
      if (run?.state !== "ended")
        this.report({
          kind: "dependent-early",
          line,
          detail: `${waiter.what} started while job ${prerequisite} ${run ? `had its last run (pid ${run.pid}, line ${run.line}) ${run.state}` : "had never run"}`,
        });
      if (!this.closed.has(prerequisite)) this.closed.set(prerequisite, { what: waiter.what, line });
    }
  }

  /** At the end of the log: every batch ran each of its callbacks (as one job: see {@link callbackStarted}). */
  finish(lastLine: number): void {
    for (const [id, batch] of this.batches)
      for (const name of batch.callbacks)
        if (!this.callbacks.get(id)?.get(name)?.size)
          this.report({ kind: "callback-count", line: lastLine, detail: `batch ${id}'s ${name} never started` });
  }

  /** How many callback jobs started. */
  callbackJobs(): number {
    let count = 0;
    for (const jobs of this.callbacks.values()) for (const seen of jobs.values()) count += seen.size;
    return count;
  }
}

/** Lines a process of the run writes about itself, and those whose pid is the second field. */
const PROCESS_LINES = new Set(["start", "end", "fail", "abort", "up", "ready", "uncaught", "exit"]);
const WRITTEN_BY_SECOND = new Set(["start", "end", "fail", "abort"]);
