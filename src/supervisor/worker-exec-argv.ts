import { ConfigurationError } from "../errors.js";
import { shown } from "../shown-value.js";

/**
 * Node flags a fork-mode worker child runs with when its worker sets no `execArgv`: none. The
 * V8 flags measured for a worker on the hot path that lowered its peak resident set (a capped
 * young generation) cost more than 3% of its rate; the others (a single-threaded collector, a
 * smaller thread pool) changed neither consistently (docs/benchmarks.md, "Memory").
 */
export const DEFAULT_WORKER_EXEC_ARGV: readonly string[] = Object.freeze([]);

/**
 * A worker's `execArgv` option: a list of node flags (strings), or undefined for the defaults.
 * An empty list means none. `what` names the option in the error.
 */
export function resolveWorkerExecArgv(value: unknown, what: string): readonly string[] {
  if (value === undefined) return DEFAULT_WORKER_EXEC_ARGV;
  if (!Array.isArray(value) || !value.every((flag) => typeof flag === "string" && flag !== "")) {
    throw new ConfigurationError(`${what} must be a list of node flags (non-empty strings), got ${shown(value)}`);
  }
  return Object.freeze([...value]);
}
