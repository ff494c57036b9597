import { Inject, SetMetadata } from "@nestjs/common";
import { ConfigurationError } from "../errors.js";
import type { JobOptions } from "../definitions/job-definition.js";
import type { Job } from "../facade/job.js";
import type { EnqueueResult } from "../lifecycle/enqueue-result.js";
import { FIRM_QUEUE, JOB_HANDLER_METADATA } from "./tokens.js";

/** What {@link JobHandler} records on a method. */
export interface JobHandlerMetadata {
  /** The job's name (the method defines it), or a job declared with `firm.declareJob` (it implements it). */
  readonly job: string | Job<unknown, EnqueueResult, unknown>;
  /** Options of a job defined by name (queue, priority, retries, …); a declared job has its own. */
  readonly options?: JobOptions<unknown>;
}

/**
 * Make a provider's method the handler of a job. With a name, the job is defined on the module's
 * FirmQueue with `options`; with a job from `firm.declareJob(…)` (shared with a web process that
 * only enqueues), the method implements it. The method is called on the provider's instance, so
 * it has the provider's injected dependencies; it gets the job's arguments and context, as a
 * handler passed to `defineJob` does. The provider must be a singleton (the default scope).
 *
 * ```ts
 * @Injectable()
 * export class Mailer {
 *   constructor(private readonly smtp: SmtpClient) {}
 *   @JobHandler("send-email", { queue: "mail" })
 *   async sendEmail(args: { to: string }, ctx: JobContext) { … }
 * }
 * ```
 *
 * For TypeScript's `experimentalDecorators`, as NestJS itself uses.
 */
export function JobHandler<Args>(
  job: string | Job<Args, EnqueueResult, unknown>,
  options?: JobOptions<Args>,
): MethodDecorator {
  if (typeof job !== "string" && options !== undefined)
    throw new ConfigurationError(
      `@JobHandler(${job.name}): a declared job has its options in its declaration; pass options only with a job name`,
    );
  // Stored without the argument type: the explorer hands the method whatever the job was given.
  const metadata = (options === undefined ? { job } : { job, options }) as JobHandlerMetadata;
  return SetMetadata(JOB_HANDLER_METADATA, metadata);
}

/** Inject the module's FirmQueue into a constructor parameter: `@InjectFirmQueue() private readonly firm: FirmQueue`. */
export function InjectFirmQueue(): PropertyDecorator & ParameterDecorator {
  return Inject(FIRM_QUEUE);
}
