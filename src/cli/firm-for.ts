import { ConfigurationError } from "../errors.js";
import { FirmQueue } from "../firm-queue.js";
import { loadJobModules } from "../module-loader.js";
import { checkTablePrefix } from "../database/table-prefix.js";

/** Where a command's FirmQueue comes from: job modules, and the database URL and log level it was given. */
export interface FirmSource {
  readonly modules: readonly string[];
  readonly databaseUrl?: string | undefined;
  readonly logLevel?: string | undefined;
  /** The config file's `logFormat` (a flag or FIRM_QUEUE_LOG_FORMAT has already been folded in). */
  readonly logFormat?: string | undefined;
  readonly listenUrl?: string | undefined;
  readonly tablePrefix?: string | undefined;
}

/**
 * The FirmQueue a command works with: the one its job modules define, or, when the command needs
 * no jobs and none are given, a bare instance on the URL. The URL and log level are put in the
 * environment before the modules load, so instances that read FIRM_QUEUE_DATABASE_URL and
 * FIRM_QUEUE_LOG_LEVEL (and FIRM_QUEUE_LISTEN_URL, FIRM_QUEUE_TABLE_PREFIX) pick them up; a module that passes another URL
 * or table prefix to `new FirmQueue()` is an error rather than a silent choice between the two.
 */
export async function firmFor(
  source: FirmSource,
  { jobsRequired }: { readonly jobsRequired: boolean },
): Promise<FirmQueue> {
  if (source.databaseUrl !== undefined) process.env.FIRM_QUEUE_DATABASE_URL = source.databaseUrl;
  if (source.logLevel !== undefined) process.env.FIRM_QUEUE_LOG_LEVEL = source.logLevel;
  if (source.logFormat !== undefined) process.env.FIRM_QUEUE_LOG_FORMAT = source.logFormat;
  if (source.listenUrl !== undefined) process.env.FIRM_QUEUE_LISTEN_URL = source.listenUrl;
  // Checked here too, so a bad flag fails before any job module runs.
  if (source.tablePrefix !== undefined)
    process.env.FIRM_QUEUE_TABLE_PREFIX = checkTablePrefix(source.tablePrefix, "--table-prefix");
  if (source.modules.length === 0) {
    if (jobsRequired) {
      throw new ConfigurationError(
        "No job modules: pass --require <module>, set FIRM_QUEUE_JOBS, or list them under jobs in firm-queue.config.ts",
      );
    }
    return new FirmQueue();
  }
  const firm = await loadJobModules<FirmQueue>(source.modules);
  if (source.databaseUrl !== undefined && firm.options.databaseUrl !== source.databaseUrl) {
    throw new ConfigurationError(
      "The database URL given to the CLI differs from the databaseUrl your job module passes to new FirmQueue(); drop one of them",
    );
  }
  if (source.tablePrefix !== undefined && firm.options.tablePrefix !== source.tablePrefix) {
    throw new ConfigurationError(
      "The table prefix given to the CLI differs from the tablePrefix your job module passes to new FirmQueue(); drop one of them",
    );
  }
  return firm;
}
