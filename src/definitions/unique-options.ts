import { toMilliseconds, type Duration } from "../duration.js";
import { ConfigurationError } from "../errors.js";
import { shown } from "../shown-value.js";
import { isStorableText } from "../option-checks.js";

/**
 * Which states of the job holding a key make a new job with that key a duplicate:
 * - `waiting`: while the holder is ready, scheduled or blocked (once it runs, a new one may queue);
 * - `running`: while it waits or runs;
 * - `finished`: while it waits or runs, and for `period` after it finished;
 * - `replace`: while it waits, a new enqueue replaces its arguments and run time instead
 *   (debounce); once it runs, a new job is created.
 */
export type UniqueMode = "waiting" | "running" | "finished" | "replace";

/** A definition's `unique` option: the job's key, from its arguments, and how long it is held. */
export interface UniqueOptions<Args = unknown> {
  /** The key: a function of the job's arguments, or one string for every job of the definition. */
  readonly key: string | ((args: Args) => string | number);
  /** Default `"waiting"`. */
  readonly mode?: UniqueMode | undefined;
  /** For mode `"finished"`: how long after the job finished the key stays held. */
  readonly period?: Duration | undefined;
}

/** A definition's `unique` option, checked. */
export interface ResolvedUnique {
  readonly keyOf: (args: unknown) => unknown;
  readonly mode: UniqueMode;
  /** Milliseconds, for mode `finished`; null otherwise. */
  readonly holdFor: number | null;
}

/** The key, mode and hold of one job about to be enqueued. */
export interface JobKeyClaim {
  readonly key: string;
  readonly mode: UniqueMode;
  readonly holdFor: number | null;
}

/** Longest key, in characters: the key column is 255 wide on every database. */
export const MAX_KEY_LENGTH = 255;

const MODES: readonly UniqueMode[] = ["waiting", "running", "finished", "replace"];
const KEYS = new Set(["key", "mode", "period"]);

/** Check a definition's `unique` option; every mistake is a named error at `defineJob`. */
export function resolveUnique(jobName: string, options: unknown): ResolvedUnique | null {
  if (options === undefined) return null;
  const what = `defineJob("${jobName}") option unique`;
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new ConfigurationError(`${what} must be an object such as { key: (args) => args.userId }`);
  }
  for (const name of Object.keys(options)) {
    if (!KEYS.has(name)) throw new ConfigurationError(`Unknown ${what} "${name}" (known: ${[...KEYS].join(", ")})`);
  }
  const given = options as UniqueOptions;
  const { mode, holdFor } = checkMode(given.mode, given.period, what);
  return Object.freeze({ keyOf: keyFunction(given.key, what), mode, holdFor });
}

/**
 * The key claim of one job: `key` given at enqueue wins over the definition's key function; the
 * mode comes from the definition (`waiting` when it has no `unique` option). Null: no key.
 */
export function jobKeyClaim(
  jobName: string,
  unique: ResolvedUnique | null,
  args: unknown,
  givenKey: unknown,
): JobKeyClaim | null {
  if (givenKey !== undefined) {
    const key = checkKey(givenKey, `enqueue("${jobName}") option key`);
    return { key, mode: unique?.mode ?? "waiting", holdFor: unique?.holdFor ?? null };
  }
  if (unique === null) return null;
  let value: unknown;
  try {
    value = unique.keyOf(args);
  } catch (error) {
    throw new ConfigurationError(`The unique key function of job "${jobName}" threw: ${describe(error)}`, {
      cause: error,
    });
  }
  return { key: checkKey(value, `The unique key of job "${jobName}"`), mode: unique.mode, holdFor: unique.holdFor };
}

function checkMode(mode: unknown, period: unknown, what: string): { mode: UniqueMode; holdFor: number | null } {
  const resolved = mode ?? "waiting";
  if (!MODES.includes(resolved as UniqueMode)) {
    throw new ConfigurationError(`${what}.mode must be one of ${MODES.join(", ")}, got ${shown(mode)}`);
  }
  if (resolved === "finished") {
    if (period === undefined) throw new ConfigurationError(`${what}.period is required with mode "finished"`);
    const holdFor = toMilliseconds(period as Duration, `${what}.period`);
    if (holdFor <= 0) throw new ConfigurationError(`${what}.period must be more than 0`);
    return { mode: resolved, holdFor };
  }
  if (period !== undefined) throw new ConfigurationError(`${what}.period is only used with mode "finished"`);
  return { mode: resolved as UniqueMode, holdFor: null };
}

function keyFunction(key: unknown, what: string): (args: unknown) => unknown {
  if (typeof key === "function") return key as (args: unknown) => unknown;
  if (typeof key === "string" && key !== "") return () => key;
  throw new ConfigurationError(`${what}.key is required: a function of the job's arguments, or a non-empty string`);
}

function checkKey(value: unknown, what: string): string {
  const key = typeof value === "number" && Number.isFinite(value) ? String(value) : value;
  if (typeof key !== "string" || key === "" || key.length > MAX_KEY_LENGTH || !isStorableText(key)) {
    throw new ConfigurationError(
      `${what} must be a non-empty string (or a number) of at most ${MAX_KEY_LENGTH} characters, without NUL characters or unpaired surrogates, got ${shown(value)}`,
    );
  }
  return key;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
