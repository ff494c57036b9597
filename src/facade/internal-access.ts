import type { JobPolicies } from "../definitions/job-policies.js";
import type { JobRegistry } from "../definitions/job-registry.js";
import type { JobHandler, JobMiddleware } from "../definitions/job-definition.js";
import type { Logger } from "../logger.js";

/**
 * @internal What firm-queue/testing reads of a FirmQueue (not public API): its registry, policies
 * and logger, to run a scheduler of its own on the queue's clock.
 */
export const INSTANCE_PARTS: unique symbol = Symbol("firm-queue instance parts");

/** @internal See {@link INSTANCE_PARTS}. */
export interface InstanceParts {
  readonly registry: JobRegistry;
  readonly policies: JobPolicies;
  readonly logger: Logger;
  readonly preserveFinishedJobs: boolean;
}

/** @internal What `performJob` reads of a job handle: its handler and the middleware around it. */
export const JOB_PARTS: unique symbol = Symbol("firm-queue job parts");

/** @internal See {@link JOB_PARTS}. */
export interface JobParts {
  /** Null when the job is declared but not implemented on its FirmQueue. */
  // biome-ignore lint/suspicious/noExplicitAny: handlers of every argument type
  readonly handler: JobHandler<any> | null;
  readonly middleware: readonly JobMiddleware[];
  readonly logger: Logger;
}
