import type { DiscoveryService, MetadataScanner, Reflector } from "@nestjs/core";
import { ConfigurationError } from "../errors.js";
import type { FirmQueue } from "../firm-queue.js";
import type { JobHandlerMetadata } from "./decorators.js";
import { JOB_HANDLER_METADATA } from "./tokens.js";

/** The Nest services the explorer reads providers through. */
export interface ExplorerServices {
  readonly discovery: DiscoveryService;
  readonly scanner: MetadataScanner;
  readonly reflector: Reflector;
}

/**
 * Find every provider method marked with `@JobHandler` and attach it to `firm`: define the job
 * by name, or implement the declared job. Runs once, when the module initializes, after every
 * provider has been instantiated. Returns the names of the jobs it attached.
 */
export function attachJobHandlers(firm: FirmQueue, services: ExplorerServices): string[] {
  const attached: string[] = [];
  for (const wrapper of services.discovery.getProviders()) {
    const instance = wrapper.instance as Record<string, unknown> | undefined;
    if (!instance || typeof instance !== "object") continue;
    const prototype = Object.getPrototypeOf(instance) as object | null;
    if (!prototype) continue;
    for (const method of services.scanner.getAllMethodNames(prototype)) {
      const metadata = services.reflector.get<JobHandlerMetadata | undefined>(
        JOB_HANDLER_METADATA,
        instance[method] as () => unknown,
      );
      if (metadata === undefined) continue;
      const where = `${prototype.constructor.name}.${method}`;
      // A request-scoped or transient provider has no one instance a worker could call.
      if (!wrapper.isDependencyTreeStatic())
        throw new ConfigurationError(`@JobHandler on ${where}: job handlers must be on singleton providers`);
      const handler = (args: unknown, context: unknown) =>
        (instance[method] as (a: unknown, c: unknown) => unknown).call(instance, args, context);
      if (typeof metadata.job === "string") firm.defineJob(metadata.job, handler as never, metadata.options as never);
      else firm.implement(metadata.job as never, handler as never);
      attached.push(typeof metadata.job === "string" ? metadata.job : metadata.job.name);
    }
  }
  return attached;
}
