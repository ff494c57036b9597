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
 * | `start <job> <pid> <key\|-> <attempt>` | the handler | as it begins |
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
 * - a start that breaks either rule only if a process being killed was still running its job is
 *   a violation only once that process is seen alive after it (see {@link KillWindows});
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
        counts.starts++;
        started.add(job);
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
  // Verdicts held for a kill window are reported late: put every violation back in line order.
  violations.sort((x, y) => x.line - y.line);
  return { violations, succeeded, started, counts };
}

/** Lines a process of the run writes about itself, and those whose pid is the second field. */
const PROCESS_LINES = new Set(["start", "end", "fail", "abort", "up", "ready", "uncaught", "exit"]);
const WRITTEN_BY_SECOND = new Set(["start", "end", "fail", "abort"]);
