/**
 * The chaos suite's run log and what it proves. Every process of the run appends one line per
 * event to a single file with O_APPEND (one write per line), and the test appends a `kill` line
 * right after each SIGKILL it sends, so the file's line order is a happens-before order:
 *
 * | line | written by | when |
 * | --- | --- | --- |
 * | `start <job> <pid> <key\|-> <attempt>` | the handler | as it begins |
 * | `end <job> <pid> <key\|->` | the handler | its work is done, just before it returns |
 * | `fail <job> <pid> <key\|->` | the handler | just before it throws (a planned failure) |
 * | `abort <job> <pid> <key\|->` | the handler | just before it throws because its AbortSignal fired |
 * | `up <pid>` | a supervisor | registered (`onStart`) |
 * | `ready <pid> <kind> <ppid>` | a worker or dispatcher | registered (`on…Start`) |
 * | `uncaught <pid> <message>` | any process of the run | an uncaught exception is about to end it |
 * | `exit <pid> <code>` | any process of the run | in its `exit` event, the last thing it does |
 * | `kill <pid> <what>` | the test | right after SIGKILL was sent |
 * | `fault <kind> <phase>` | the test | a fault begins or ends (for reading the log; no rule uses it) |
 */

/** One way the run broke a guarantee, with the line number (1-based) where it showed. */
export interface Violation {
  readonly kind: "rerun-while-running" | "rerun-after-success" | "over-limit" | "crash" | "unmatched";
  readonly line: number;
  readonly detail: string;
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
  };
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
 * - a registered worker or dispatcher never exits with a non-zero code on its own.
 */
export function analyseChaosLog(lines: readonly string[], limit: number): ChaosLogReport {
  const violations: Violation[] = [];
  const last = new Map<number, Run>();
  const live = new Map<number, Set<Run>>(); // pid → runs since its last death
  const running = new Map<string, Set<Run>>(); // key → runs holding it
  const registered = new Set<number>();
  const uncaught = new Map<number, string>(); // pid → the error that is ending it
  const succeeded = new Set<number>();
  const started = new Set<number>();
  const counts = { starts: 0, ends: 0, fails: 0, aborts: 0, kills: 0, exits: 0, reruns: 0 };

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
    switch (event) {
      case "start": {
        const job = Number(a);
        const pid = Number(b);
        const key = c === "-" || c === undefined ? null : c;
        counts.starts++;
        started.add(job);
        const previous = last.get(job);
        if (previous) {
          counts.reruns++;
          if (previous.state === "running") {
            violations.push({
              kind: "rerun-while-running",
              line,
              detail: `job ${job} started in pid ${pid} while its run in pid ${previous.pid} (line ${previous.line}) was still going, and that process had not died`,
            });
          } else if (previous.state === "ended" && !previous.diedAfterEnd) {
            violations.push({
              kind: "rerun-after-success",
              line,
              detail: `job ${job} started again in pid ${pid} after it succeeded in pid ${previous.pid} (line ${previous.line}), which was neither killed nor crashed`,
            });
          }
        }
        if (key !== null) {
          const holders = running.get(key) ?? new Set<Run>();
          running.set(key, holders);
          if (holders.size >= limit) {
            const others = [...holders].map((run) => `job ${run.job} in pid ${run.pid} (line ${run.line})`).join(", ");
            violations.push({
              kind: "over-limit",
              line,
              detail: `job ${job} of key ${key} started in pid ${pid} while ${others} held the key (limit ${limit})`,
            });
          }
        }
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
      case "kill":
        counts.kills++;
        die(Number(a), true);
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
  return { violations, succeeded, started, counts };
}
