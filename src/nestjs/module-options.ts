import type { InjectionToken, ModuleMetadata, OptionalFactoryDependency } from "@nestjs/common";
import type { DashboardOptions } from "../dashboard/options.js";
import { ConfigurationError } from "../errors.js";
import type { FirmQueueOptions, StartOptions } from "../facade/options.js";
import { FirmQueue } from "../firm-queue.js";

/** What `FirmQueueModule.forRoot` takes. */
export interface FirmQueueModuleOptions {
  /**
   * The FirmQueue to use, when the app makes it itself (a jobs module the CLI also loads, say).
   * The module then never closes it. Without it, the module makes one from `options` and closes
   * it when the application shuts down.
   */
  readonly firm?: FirmQueue | undefined;
  /** Options of the FirmQueue the module makes (`databaseUrl`, `database`, `logger`, …). */
  readonly options?: FirmQueueOptions | undefined;
  /**
   * Run workers and dispatchers in the application's process from its bootstrap to its shutdown:
   * `true` for the defaults, or the options of `firm.start()`. Only `mode: "async"`: a forked
   * child could not rebuild the application's providers. Default: none (a process that only
   * enqueues).
   */
  readonly workers?: boolean | (Omit<StartOptions, "mode"> & { readonly mode?: "async" }) | undefined;
  /**
   * Mount the dashboard at `path` on the application's HTTP server (Express or Fastify), with
   * the dashboard's options (authentication, read-only, …).
   */
  readonly dashboard?: (Omit<DashboardOptions, "firm" | "basePath"> & { readonly path: string }) | undefined;
  /** Make the FirmQueue injectable in every module (default true). */
  readonly global?: boolean | undefined;
}

/** What `FirmQueueModule.forRootAsync` takes: the options from a factory with injected dependencies. */
export interface FirmQueueModuleAsyncOptions extends Pick<ModuleMetadata, "imports"> {
  // Method syntax: a factory with typed parameters ((config: ConfigService) => …) fits it.
  useFactory(...dependencies: unknown[]): FirmQueueModuleOptions | Promise<FirmQueueModuleOptions>;
  readonly inject?: Array<InjectionToken | OptionalFactoryDependency>;
  /** Make the FirmQueue injectable in every module (default true). */
  readonly global?: boolean;
}

/** The module's options once checked, and whose the FirmQueue is. */
export interface ResolvedModuleOptions {
  readonly firm: FirmQueue;
  /** Whether the module made the FirmQueue (and so closes it). */
  readonly owned: boolean;
  readonly workers: Omit<StartOptions, "mode"> | undefined;
  readonly dashboard: (Omit<DashboardOptions, "firm" | "basePath"> & { readonly path: string }) | undefined;
}

const KNOWN = new Set(["firm", "options", "workers", "dashboard", "global"]);

/** Check the options once, at module creation, and make the FirmQueue if none was given. */
export function resolveModuleOptions(options: FirmQueueModuleOptions): ResolvedModuleOptions {
  if (typeof options !== "object" || options === null)
    throw new ConfigurationError("FirmQueueModule options must be an object");
  const unknown = Object.keys(options).filter((key) => !KNOWN.has(key));
  if (unknown.length > 0)
    throw new ConfigurationError(
      `Unknown FirmQueueModule option ${unknown.map((key) => `"${key}"`).join(", ")}; known: ${[...KNOWN].join(", ")}`,
    );
  if (options.firm !== undefined && options.options !== undefined)
    throw new ConfigurationError("FirmQueueModule takes either firm (an instance) or options (to make one), not both");
  if (options.firm !== undefined && !(options.firm instanceof FirmQueue))
    throw new ConfigurationError("FirmQueueModule option firm must be a FirmQueue");
  const workers = options.workers === true ? {} : options.workers === false ? undefined : options.workers;
  if (workers !== undefined && (workers as StartOptions).mode === "fork")
    throw new ConfigurationError(
      "FirmQueueModule runs workers in the application's process (mode \"async\"): a forked child cannot rebuild the application's providers. Run handlers in fork mode with `firm-queue start` and a jobs module instead",
    );
  const dashboard = options.dashboard;
  if (dashboard !== undefined && (typeof dashboard.path !== "string" || !dashboard.path.startsWith("/")))
    throw new ConfigurationError(
      'FirmQueueModule option dashboard.path must be a path starting with "/", e.g. "/jobs"',
    );
  const firm = options.firm ?? new FirmQueue(options.options);
  return { firm, owned: options.firm === undefined, workers, dashboard };
}
