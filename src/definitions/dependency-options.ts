import { InvalidDependencyError } from "../errors.js";
import { shown } from "../shown-value.js";

/**
 * The most dependencies one job may have. A fan-in of this many children into one parent costs
 * the same per finish as a fan-in of two (each finish lowers one counter); the limit bounds what
 * one enqueue writes and checks in its transaction.
 */
export const MAX_DEPENDENCIES = 50_000;

/** What a dependent does when one of its dependencies fails for good or is cancelled. */
export type DependencyFailurePolicy = "cancel" | "run";

/** A job's checked dependencies: the ids in `dependsOn` order and its failure policy. */
export interface JobDependencies {
  readonly ids: readonly number[];
  readonly onFailure: DependencyFailurePolicy;
}

/**
 * Check the `dependsOn` and `onDependencyFailure` options of one job (`what` names the call, for
 * the message). Returns null for a job without dependencies (an empty list is none).
 */
export function checkDependencies(dependsOn: unknown, onFailure: unknown, what: string): JobDependencies | null {
  const policy = checkFailurePolicy(onFailure, what);
  if (dependsOn === undefined) return null;
  const option = `${what} option dependsOn`;
  if (!Array.isArray(dependsOn))
    throw new InvalidDependencyError(option, `must be a list of job ids, got ${shown(dependsOn)}`);
  if (dependsOn.length > MAX_DEPENDENCIES)
    throw new InvalidDependencyError(
      option,
      `has ${dependsOn.length} ids: a job may depend on at most ${MAX_DEPENDENCIES}`,
    );
  const seen = new Set<number>();
  for (const [index, id] of dependsOn.entries()) {
    if (typeof id !== "number" || !Number.isSafeInteger(id) || id <= 0)
      throw new InvalidDependencyError(option, `[${index}] must be a job id (a positive integer), got ${shown(id)}`);
    if (seen.has(id)) throw new InvalidDependencyError(option, `lists job ${id} twice`);
    seen.add(id);
  }
  if (dependsOn.length === 0) return null;
  return { ids: dependsOn as number[], onFailure: policy };
}

/** Check an `onDependencyFailure` option (`what` names the call); absent is `"cancel"`. */
export function checkFailurePolicy(value: unknown, what: string): DependencyFailurePolicy {
  if (value === undefined) return "cancel";
  if (value === "cancel" || value === "run") return value;
  throw new InvalidDependencyError(
    `${what} option onDependencyFailure`,
    `must be "cancel" or "run", got ${shown(value)}`,
  );
}
