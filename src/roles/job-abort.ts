/**
 * A running job's abort: the worker fires it (shutdown, cancel) and the handler reads
 * `context.signal`. The `AbortController` behind the signal is made only when something asks for
 * the signal: most handlers never do, and a controller with its signal for every job was a
 * measurable share of a busy worker's time and garbage (bench/results/history.md, "Hot path, third
 * pass"). Fired before anyone asked, the signal is made already aborted, with the same reason.
 */
export class JobAbort {
  private controller: AbortController | undefined;
  private fired = false;
  private why: unknown;

  /** @param given a signal someone else owns and fires (a drain's): then it is the job's signal. */
  constructor(private readonly given?: AbortSignal) {}

  /** Whether it has fired. */
  get aborted(): boolean {
    return this.given === undefined ? this.fired : this.given.aborted;
  }

  /** Why it fired (undefined until it has). */
  get reason(): unknown {
    return this.given === undefined ? this.why : this.given.reason;
  }

  /** The job's AbortSignal, made on first use. */
  get signal(): AbortSignal {
    if (this.given !== undefined) return this.given;
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.fired) this.controller.abort(this.why);
    }
    return this.controller.signal;
  }

  /** Fire it with `reason`; only the first call counts. A given signal is fired by its owner only. */
  abort(reason: unknown): void {
    if (this.given !== undefined || this.fired) return;
    this.fired = true;
    this.why = reason;
    this.controller?.abort(reason);
  }
}
