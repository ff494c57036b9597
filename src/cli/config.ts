import { basename, dirname, resolve } from "node:path";
import { resolveStartOptions, type StartOptions, type WorkerOptions } from "../facade/options.js";
import type { ResolvedStartOptions } from "../supervisor/settings.js";
import { parseDatabaseUrl } from "../database/url.js";
import { toMilliseconds } from "../duration.js";
import { ConfigurationError } from "../errors.js";
import { countOrZeroArgument, rejectUnknownKeys, wholeNumberArgument } from "../option-checks.js";
import { isLogLevel, type LogLevel } from "../logger.js";
import { findConfigFile, loadConfigFile } from "./config-file.js";
import { checkTablePrefix } from "../database/table-prefix.js";
import { shown } from "../shown-value.js";

/** What a config module's default export may contain. Every key is optional. */
export interface FirmQueueConfig extends Omit<StartOptions, "mode" | "require"> {
  /** `sqlite:path`, `postgres://…` or `mysql://…`. */
  readonly databaseUrl?: string | undefined;
  /** PostgreSQL: a direct URL for the LISTEN connection when `databaseUrl` goes through a pooler. */
  readonly listenUrl?: string | undefined;
  /** What firm-queue's table names start with (default `firm_queue_`); see `tablePrefix` of `new FirmQueue()`. */
  readonly tablePrefix?: string | undefined;
  /** Modules defining your jobs (relative to the config file), as `--require` takes them. */
  readonly jobs?: readonly string[] | undefined;
  /** `"fork"` (default here, unlike `firm.start()`): a child process per role. `"async"`: everything in one process. */
  readonly mode?: "fork" | "async" | undefined;
  readonly logLevel?: LogLevel | undefined;
  /** `"text"` (default) or `"json"`: how the default logger writes (env FIRM_QUEUE_LOG_FORMAT and `--log-format` win). */
  readonly logFormat?: "text" | "json" | undefined;
}

/** Identity function that gives a config module its types. */
export function defineConfig(config: FirmQueueConfig): FirmQueueConfig {
  return config;
}

/** Values given on the command line (undefined when not given). */
export interface CliFlags {
  readonly config?: string;
  readonly databaseUrl?: string;
  readonly listenUrl?: string;
  readonly tablePrefix?: string;
  readonly require?: readonly string[];
  readonly mode?: string;
  readonly queues?: string;
  readonly concurrency?: string;
  readonly processes?: string;
  readonly pollingInterval?: string;
  readonly prefetch?: string;
  readonly execArgv?: string;
  readonly shutdownTimeout?: string;
  readonly processHeartbeatInterval?: string;
  readonly processAliveThreshold?: string;
}

/** The settings `firm-queue start` runs with, every layer applied and checked. */
export interface CliConfig {
  /** The config file used, if any. */
  readonly file: string | undefined;
  readonly databaseUrl: string | undefined;
  readonly listenUrl: string | undefined;
  readonly tablePrefix: string | undefined;
  /** Absolute paths of the job modules. */
  readonly jobs: readonly string[];
  readonly logLevel: LogLevel | undefined;
  /** From FIRM_QUEUE_LOG_FORMAT (where `--log-format` puts it), else the file's `logFormat`. */
  readonly logFormat: "text" | "json" | undefined;
  /** The options to give `firm.start()`; recurring tasks are checked there, against the jobs. */
  readonly startOptions: StartOptions;
  /** The same, checked and with defaults filled in. */
  readonly start: ResolvedStartOptions;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * One setting that a flag and an environment variable can override. Adding a setting (a scheduler
 * section, say) is one more row: its config key, its flag, its variable, and how to read text.
 */
interface Override {
  readonly flag: keyof CliFlags;
  readonly flagName: string;
  readonly env: string;
  /** Parse `text` (named `label` in errors) and store it in the config being built. */
  apply(config: Mutable<FirmQueueConfig>, text: string, label: string): void;
}

const setTop =
  (key: keyof FirmQueueConfig, parse: (text: string, label: string) => unknown) =>
  (config: Mutable<FirmQueueConfig>, text: string, label: string) =>
    void ((config as Record<string, unknown>)[key] = parse(text, label));

/** Worker flags apply to every configured worker (or to the default one). */
const setWorkers =
  (key: keyof WorkerOptions, parse: (text: string, label: string) => unknown) =>
  (config: Mutable<FirmQueueConfig>, text: string, label: string) => {
    const value = parse(text, label);
    config.workers = (config.workers ?? [{}]).map((worker) => ({ ...worker, [key]: value }));
  };

const duration = (text: string, label: string): string => {
  toMilliseconds(text, label); // checked here so a bad flag names itself; kept as written
  return text;
};
/** Node flags as a shell would split them on spaces; an empty text is none. */
const nodeFlags = (text: string): string[] => text.split(/\s+/).filter((flag) => flag !== "");
const queueList = (text: string): string[] =>
  text
    .split(",")
    .map((queue) => queue.trim())
    .filter((queue) => queue !== "");

const OVERRIDES: readonly Override[] = [
  {
    flag: "databaseUrl",
    flagName: "--database-url",
    env: "FIRM_QUEUE_DATABASE_URL",
    apply: setTop("databaseUrl", (text) => text),
  },
  {
    flag: "listenUrl",
    flagName: "--listen-url",
    env: "FIRM_QUEUE_LISTEN_URL",
    apply: setTop("listenUrl", (text) => text),
  },
  {
    flag: "tablePrefix",
    flagName: "--table-prefix",
    env: "FIRM_QUEUE_TABLE_PREFIX",
    apply: setTop("tablePrefix", (text, label) => checkTablePrefix(text, label)),
  },
  { flag: "mode", flagName: "--mode", env: "FIRM_QUEUE_MODE", apply: setTop("mode", checkMode) },
  {
    flag: "shutdownTimeout",
    flagName: "--shutdown-timeout",
    env: "FIRM_QUEUE_SHUTDOWN_TIMEOUT",
    apply: setTop("shutdownTimeout", duration),
  },
  {
    flag: "processHeartbeatInterval",
    flagName: "--process-heartbeat-interval",
    env: "FIRM_QUEUE_PROCESS_HEARTBEAT_INTERVAL",
    apply: setTop("processHeartbeatInterval", duration),
  },
  {
    flag: "processAliveThreshold",
    flagName: "--process-alive-threshold",
    env: "FIRM_QUEUE_PROCESS_ALIVE_THRESHOLD",
    apply: setTop("processAliveThreshold", duration),
  },
  { flag: "queues", flagName: "--queues", env: "FIRM_QUEUE_QUEUES", apply: setWorkers("queues", queueList) },
  {
    flag: "concurrency",
    flagName: "--concurrency",
    env: "FIRM_QUEUE_CONCURRENCY",
    apply: setWorkers("concurrency", wholeNumberArgument),
  },
  {
    flag: "processes",
    flagName: "--processes",
    env: "FIRM_QUEUE_PROCESSES",
    apply: setWorkers("processes", wholeNumberArgument),
  },
  {
    flag: "pollingInterval",
    flagName: "--polling-interval",
    env: "FIRM_QUEUE_POLLING_INTERVAL",
    apply: setWorkers("pollingInterval", duration),
  },
  {
    flag: "prefetch",
    flagName: "--prefetch",
    env: "FIRM_QUEUE_PREFETCH",
    apply: setWorkers("prefetch", countOrZeroArgument),
  },
  {
    flag: "execArgv",
    flagName: "--exec-argv",
    env: "FIRM_QUEUE_EXEC_ARGV",
    apply: setWorkers("execArgv", nodeFlags),
  },
];

const CONFIG_KEYS = new Set([
  "databaseUrl",
  "listenUrl",
  "tablePrefix",
  "jobs",
  "mode",
  "logLevel",
  "logFormat",
  "workers",
  "dispatchers",
  "processHeartbeatInterval",
  "processAliveThreshold",
  "shutdownTimeout",
  "recurring",
  "scheduler",
]);

/**
 * Build the settings for `start` and `check`: the config file (--config, else env
 * FIRM_QUEUE_CONFIG, else firm-queue.config.* in `cwd`, else none), then `FIRM_QUEUE_*`
 * variables, then flags, each overriding the one before. Errors name the key, variable or flag.
 */
export async function resolveCliConfig(
  flags: CliFlags,
  env: Readonly<Record<string, string | undefined>> = process.env,
  cwd: string = process.cwd(),
): Promise<CliConfig> {
  const file = findConfigFile(flags.config ?? env.FIRM_QUEUE_CONFIG, cwd);
  const where = file ? basename(file) : "configuration";
  let config: Mutable<FirmQueueConfig> = {};
  if (file) {
    const { contents } = await loadConfigFile(file);
    if (typeof contents !== "object" || contents === null || Array.isArray(contents)) {
      throw new ConfigurationError(`${where}: the default export must be an object of settings`);
    }
    rejectUnknownKeys(contents, CONFIG_KEYS, `${where} key`);
    config = { ...(contents as FirmQueueConfig) };
  }
  const base = file ? dirname(file) : cwd;
  let jobs =
    config.jobs === undefined ? [] : checkJobs(config.jobs, `${where}: jobs`).map((path) => resolve(base, path));
  for (const override of OVERRIDES) {
    const text = env[override.env];
    if (text !== undefined && text !== "") override.apply(config, text, override.env);
  }
  if (env.FIRM_QUEUE_JOBS) jobs = queueList(env.FIRM_QUEUE_JOBS).map((path) => resolve(cwd, path));
  for (const override of OVERRIDES) {
    const text = flags[override.flag];
    if (typeof text === "string") override.apply(config, text, override.flagName);
  }
  if (flags.require && flags.require.length > 0) jobs = flags.require.map((path) => resolve(cwd, path));
  try {
    if (config.databaseUrl !== undefined) parseDatabaseUrl(checkString(config.databaseUrl, "databaseUrl"));
    if (config.listenUrl !== undefined) parseDatabaseUrl(checkString(config.listenUrl, "listenUrl"));
    if (config.tablePrefix !== undefined) checkTablePrefix(config.tablePrefix);
    if (config.logLevel !== undefined && !isLogLevel(config.logLevel)) {
      throw new ConfigurationError(`logLevel must be debug, info, warn or error, got ${shown(config.logLevel)}`);
    }
    if (config.logFormat !== undefined && config.logFormat !== "text" && config.logFormat !== "json") {
      throw new ConfigurationError(`logFormat must be text or json, got ${shown(config.logFormat)}`);
    }
    const {
      logFormat: _format,
      databaseUrl: _url,
      listenUrl: _listen,
      tablePrefix: _prefix,
      jobs: _jobs,
      logLevel: _level,
      ...startOptions
    } = config;
    const options: StartOptions = {
      ...startOptions,
      mode: checkMode(config.mode ?? "fork", "mode"),
      ...(jobs.length > 0 ? { require: jobs } : {}),
    };
    const start = resolveStartOptions(options);
    return {
      file,
      databaseUrl: config.databaseUrl,
      listenUrl: config.listenUrl,
      tablePrefix: config.tablePrefix,
      jobs,
      logLevel: config.logLevel,
      logFormat: logFormatOf(env.FIRM_QUEUE_LOG_FORMAT) ?? config.logFormat,
      startOptions: options,
      start,
    };
  } catch (error) {
    if (error instanceof ConfigurationError)
      throw new ConfigurationError(`${where}: ${error.message}`, { cause: error });
    throw error;
  }
}

function checkMode(value: unknown, label: string): "fork" | "async" {
  if (value !== "fork" && value !== "async")
    throw new ConfigurationError(`${label} must be "fork" or "async", got ${shown(value)}`);
  return value;
}

function checkString(value: unknown, label: string): string {
  if (typeof value !== "string" || value === "")
    throw new ConfigurationError(`${label} must be a non-empty string, got ${shown(value)}`);
  return value;
}

function checkJobs(value: unknown, label: string): string[] {
  if (!Array.isArray(value) || !value.every((path) => typeof path === "string" && path !== "")) {
    throw new ConfigurationError(`${label} must be a list of module paths, got ${shown(value)}`);
  }
  return value as string[];
}

/** The format an environment value names; anything else is left to the logger's own check. */
function logFormatOf(text: string | undefined): "text" | "json" | undefined {
  return text === "text" || text === "json" ? text : undefined;
}
