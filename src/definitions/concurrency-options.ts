import { toMilliseconds, type Duration } from "../duration.js";
import { ConfigurationError } from "../errors.js";
import { isStorableText } from "../option-checks.js";
import { shown } from "../shown-value.js";

/** What a concurrency key function may return; it is turned into text for the stored key. */
export type ConcurrencyKeyValue = string | number | bigint;

/**
 * What to do with a due job whose key has no free slot: `"block"` it until one frees, or
 * `"drop"` it (nothing is kept). `"discard"` is the old name of `"drop"`, still accepted.
 */
export type OnConflict = "block" | "drop" | "discard";

/** {@link OnConflict} as a resolved limit holds it: the old name `"discard"` reads `"drop"`. */
export type ResolvedOnConflict = "block" | "drop";

/**
 * The `concurrency` option of `defineJob`: at most `to` jobs with the same key run at once.
 * Jobs over the limit wait as "blocked" (or are dropped with `onConflict: "drop"`).
 */
// biome-ignore lint/suspicious/noExplicitAny: an unannotated definition accepts any arguments (variance of the default)
export interface ConcurrencyOptions<Args = any> {
  /** The key jobs are limited by: a function of the job's arguments, or one fixed string. */
  readonly key: ((args: Args) => ConcurrencyKeyValue) | string;
  /** Jobs with one key that may run at once. Default 1. */
  readonly to?: number | undefined;
  /**
   * How long a key's slots stay reserved after their last change (an acquire or a release).
   * Past that, the dispatcher's maintenance frees them: the failsafe for slots held by crashed
   * processes. Default 3 minutes.
   */
  readonly duration?: Duration | undefined;
  /** Jobs of different names sharing a group share slots per key. Default: the job's name. */
  readonly group?: string | undefined;
  /**
   * `"block"` (default): wait for a slot. `"drop"`: drop the job; `enqueue` returns null.
   * `"discard"` is a deprecated alias of `"drop"`.
   */
  readonly onConflict?: OnConflict | undefined;
}

/** Concurrency options of a definition that blocks on conflict: `enqueue` always returns an id. */
// biome-ignore lint/suspicious/noExplicitAny: an unannotated definition accepts any arguments (variance of the default)
export type BlockingConcurrencyOptions<Args = any> = ConcurrencyOptions<Args> & { readonly onConflict?: "block" };

/** Concurrency options of a definition that drops jobs on conflict: `enqueue` may return null. */
// biome-ignore lint/suspicious/noExplicitAny: an unannotated definition accepts any arguments (variance of the default)
export type DroppingConcurrencyOptions<Args = any> = ConcurrencyOptions<Args> & {
  readonly onConflict: "drop" | "discard";
};

/** @deprecated The old name of {@link DroppingConcurrencyOptions}. */
// biome-ignore lint/suspicious/noExplicitAny: an unannotated definition accepts any arguments (variance of the default)
export type DiscardingConcurrencyOptions<Args = any> = DroppingConcurrencyOptions<Args>;

/** The limit a key is held to, and what happens to a job over it. */
export interface ConcurrencyLimit {
  readonly to: number;
  /** Milliseconds. */
  readonly duration: number;
  readonly onConflict: ResolvedOnConflict;
}

/** {@link ConcurrencyOptions} checked, with every default filled in. */
export interface ResolvedConcurrency extends ConcurrencyLimit {
  readonly group: string;
  /** The key part (without the group) for a job's arguments, as given to `enqueue`. */
  readonly keyOf: (args: unknown) => unknown;
}

/** Three minutes, as in Solid Queue. */
export const DEFAULT_CONCURRENCY_DURATION = 180_000;

/** Longest stored key (`group/key`): the column is 255 characters on every database. */
const MAX_KEY_LENGTH = 255;
const KEYS = new Set(["key", "to", "duration", "group", "onConflict"]);

/** Check a definition's `concurrency` option; every mistake is a named error at `defineJob`. */
export function resolveConcurrency(jobName: string, options: unknown): ResolvedConcurrency | null {
  if (options === undefined) return null;
  const what = `defineJob("${jobName}") option concurrency`;
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new ConfigurationError(`${what} must be an object such as { key: (args) => args.accountId, to: 1 }`);
  }
  for (const name of Object.keys(options)) {
    if (!KEYS.has(name)) throw new ConfigurationError(`Unknown ${what} "${name}" (known: ${[...KEYS].join(", ")})`);
  }
  const given = options as ConcurrencyOptions;
  const to = given.to ?? 1;
  if (typeof to !== "number" || !Number.isInteger(to) || to < 1 || to > 2 ** 31 - 1) {
    throw new ConfigurationError(`${what}.to must be a whole number of at least 1, got ${shown(to)}`);
  }
  const duration = toMilliseconds(given.duration ?? DEFAULT_CONCURRENCY_DURATION, `${what}.duration`);
  if (duration <= 0) throw new ConfigurationError(`${what}.duration must be more than 0`);
  const group = given.group ?? jobName;
  if (typeof group !== "string" || group === "" || group.length > 200 || !isStorableText(group)) {
    throw new ConfigurationError(
      `${what}.group must be a non-empty string of at most 200 characters, without NUL characters or unpaired surrogates, got ${shown(group)}`,
    );
  }
  const chosen = given.onConflict ?? "block";
  if (chosen !== "block" && chosen !== "drop" && chosen !== "discard") {
    throw new ConfigurationError(`${what}.onConflict must be "block" or "drop", got ${shown(chosen)}`);
  }
  const onConflict: ResolvedOnConflict = chosen === "discard" ? "drop" : chosen;
  return Object.freeze({ to, duration, group, onConflict, keyOf: keyFunction(given.key, what) });
}

function keyFunction(key: unknown, what: string): (args: unknown) => unknown {
  if (typeof key === "function") return key as (args: unknown) => unknown;
  if (typeof key === "string" && key !== "") return () => key;
  throw new ConfigurationError(`${what}.key is required: a function of the job's arguments, or a non-empty string`);
}

/**
 * The stored key of a job, `${group}/${key}`. A key function that throws or returns something
 * other than a string, number or bigint is a named error, and nothing is enqueued.
 */
export function concurrencyKeyFor(jobName: string, concurrency: ResolvedConcurrency, args: unknown): string {
  let value: unknown;
  try {
    value = concurrency.keyOf(args);
  } catch (error) {
    throw new ConfigurationError(
      `The concurrency key function of job "${jobName}" threw: ${(error as Error)?.message ?? String(error)}`,
      { cause: error },
    );
  }
  const valid =
    (typeof value === "string" && value !== "") ||
    (typeof value === "number" && Number.isFinite(value)) ||
    typeof value === "bigint";
  if (!valid) {
    throw new ConfigurationError(
      `The concurrency key function of job "${jobName}" must return a non-empty string, a finite number or a bigint, got ${describe(value)}`,
    );
  }
  const key = `${concurrency.group}/${String(value)}`;
  if (!isStorableText(key)) {
    throw new ConfigurationError(
      `The concurrency key of job "${jobName}" holds a NUL character or an unpaired surrogate, which no database stores as given: ${shown(key)}`,
    );
  }
  if ([...key].length > MAX_KEY_LENGTH) {
    throw new ConfigurationError(
      `The concurrency key of job "${jobName}" is longer than ${MAX_KEY_LENGTH} characters: ${key.slice(0, 60)}…`,
    );
  }
  return key;
}

function describe(value: unknown): string {
  if (value === undefined) return "undefined";
  if (typeof value === "object")
    return value === null ? "null" : `an object (${Object.prototype.toString.call(value)})`;
  return `${typeof value} ${String(value)}`;
}
