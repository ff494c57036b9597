import type { ResolvedJobOptions } from "./job-definition.js";
import type { DefinitionLookup } from "./job-registry.js";

/** The declared jobs, with their names for the error that reports an undeclared one. */
export interface DeclaredJobs extends DefinitionLookup {
  names(): string[];
}

/**
 * The declared defaults of a job that a workflow (a flow's node, a batch's job or callback) writes:
 * only a job declared in this process, and without a unique key (a duplicate's row would be
 * dropped, leaving what waits on it waiting on nothing). `refuse(problem)` makes the named error
 * of the call (`workflow`, as "a flow's" or "a batch's", says whose jobs in its message).
 */
export function workflowJobOptions(
  registry: DeclaredJobs,
  name: string,
  workflow: string,
  refuse: (problem: string) => Error,
): ResolvedJobOptions {
  const declared = registry.get(name)?.options;
  if (declared === undefined) {
    const known = registry.names();
    throw refuse(
      `names "${name}", a job not declared in this process (${known.length > 0 ? `declared: ${known.join(", ")}` : "none is declared"})`,
    );
  }
  if (declared.unique !== null)
    throw refuse(`names "${name}", a job with a unique key: ${workflow} jobs cannot be unique`);
  return declared;
}
