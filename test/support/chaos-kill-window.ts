import type { Violation } from "./chaos-log.js";

/** A run (or anything) that lives in one process. */
interface InProcess {
  readonly pid: number;
}

/** A verdict waiting to learn whether processes being killed were still alive at its line. */
interface Suspicion {
  readonly violation: Violation;
  /** Causes whose process was certainly alive, so certainly still running them, at the line. */
  certain: number;
  /** Causes in a process being killed then: alive only if that process writes another line. */
  readonly uncertain: Set<InProcess>;
  /** How many causes still running make it a violation. */
  readonly needed: number;
}

/**
 * The chaos log's kill windows. The test writes `killing <pid>` before it sends SIGKILL and
 * `kill <pid>` after; the process died somewhere in between, and everything its death sets off
 * (its claims recovered, its key's next job started elsewhere) may be logged before the `kill`
 * line. So a rule that another job's start broke only if a run of a process being killed was
 * still going is held until the log says which: the process writes another line (it was alive,
 * so its run was still going: a violation), or its `kill` line comes first (it may have been dead
 * already: no evidence, no violation). A start before the `killing` line is judged at once: no
 * signal had been sent.
 */
export class KillWindows {
  private readonly dying = new Set<number>();
  private suspicions: Suspicion[] = [];

  constructor(private readonly report: (violation: Violation) => void) {}

  /** The test is about to SIGKILL `pid`. */
  killing(pid: number): void {
    this.dying.add(pid);
  }

  /**
   * `violation` holds if at least `needed` of `causes` were still running when its line was
   * written by `writer` (a process that writes a line is alive). Reported now, later, or never.
   */
  judge(violation: Violation, causes: readonly InProcess[], needed: number, writer: number): void {
    const uncertain = new Set(causes.filter((cause) => cause.pid !== writer && this.dying.has(cause.pid)));
    const certain = causes.length - uncertain.size;
    if (certain >= needed) this.report(violation);
    else if (certain + uncertain.size >= needed) this.suspicions.push({ violation, certain, uncertain, needed });
  }

  /** `pid` wrote a line: it was alive after every earlier line, so its runs were still going at them. */
  wrote(pid: number): void {
    if (!this.dying.has(pid)) return;
    this.suspicions = this.suspicions.filter((suspicion) => {
      for (const cause of [...suspicion.uncertain]) {
        if (cause.pid !== pid) continue;
        suspicion.uncertain.delete(cause);
        suspicion.certain++;
      }
      if (suspicion.certain < suspicion.needed) return true;
      this.report(suspicion.violation);
      return false;
    });
  }

  /** The SIGKILL of `pid` was sent: it wrote nothing more, so it may have died before any suspicion's line. */
  killed(pid: number): void {
    this.dying.delete(pid);
    this.suspicions = this.suspicions.filter((suspicion) => {
      for (const cause of [...suspicion.uncertain]) if (cause.pid === pid) suspicion.uncertain.delete(cause);
      return suspicion.certain + suspicion.uncertain.size >= suspicion.needed;
    });
  }
}
