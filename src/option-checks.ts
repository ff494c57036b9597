import { ConfigurationError } from "./errors.js";
import { shown } from "./shown-value.js";

/*
 * Checks of option values shared by every layer. Each returns the value it accepted or throws a
 * ConfigurationError naming the option (`what`) and the value it got.
 */

/**
 * Whether every database stores `text` exactly as given: no NUL character (PostgreSQL's text
 * cannot hold one) and no unpaired UTF-16 surrogate (it has no UTF-8 form: the drivers write
 * U+FFFD instead, so the stored name would differ from the one given).
 */
export function isStorableText(text: string): boolean {
  return !text.includes("\0") && !LONE_SURROGATE.test(text);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A job name: a non-empty string of at most 255 characters that every database stores as given. */
export function checkJobName(name: unknown): string {
  if (typeof name !== "string" || name.trim() === "" || name.length > 255 || !isStorableText(name)) {
    throw new ConfigurationError(
      `A job name must be a non-empty string of at most 255 characters, without NUL characters or unpaired surrogates, got ${shown(name)}`,
    );
  }
  return name;
}

/** A queue name: 1–255 characters without spaces, commas or `*` (those mean something in queue lists), storable as given. */
export function checkQueueName(queue: unknown, what: string): string {
  if (
    typeof queue !== "string" ||
    queue === "" ||
    queue.length > 255 ||
    /[\s,*]/.test(queue) ||
    !isStorableText(queue)
  ) {
    throw new ConfigurationError(
      `${what} must be a queue name (1-255 characters, no spaces, commas, * , NUL characters or unpaired surrogates), got ${shown(queue)}`,
    );
  }
  return queue;
}

/** A priority: a 32-bit integer; smaller runs first. */
export function checkPriority(priority: unknown, what: string): number {
  if (typeof priority !== "number" || !Number.isInteger(priority) || Math.abs(priority) > 2 ** 31 - 1) {
    throw new ConfigurationError(`${what} must be an integer (smaller runs first), got ${shown(priority)}`);
  }
  return priority;
}

/** Refuse keys of an options object that are not in `allowed` (a typo must not pass silently). */
export function rejectUnknownKeys(value: object, allowed: ReadonlySet<string>, what: string): void {
  if (typeof value !== "object" || value === null) throw new ConfigurationError(`${what}s must be an object`);
  for (const key of Object.keys(value)) {
    if (!allowed.has(key)) {
      throw new ConfigurationError(`Unknown ${what} "${key}" (known: ${[...allowed].join(", ")})`);
    }
  }
}

/**
 * A job id: a whole number of at least 1. A malformed id is a ConfigurationError everywhere; a
 * well-formed id of a job that does not exist is for the caller to answer (null from a read,
 * JobNotFoundError from a change).
 */
export function checkJobId(value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    throw new ConfigurationError(`${what} needs a job id (a whole number of at least 1), got ${shown(value)}`);
  }
  return value;
}

/** A whole number of at least 1. */
export function positiveInteger(value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    throw new ConfigurationError(`${what} must be a whole number of at least 1, got ${shown(value)}`);
  }
  return value;
}

/** A whole number, 0 or more. */
export function nonNegativeInteger(value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    throw new ConfigurationError(`${what} must be a whole number of at least 0, got ${shown(value)}`);
  }
  return value;
}

/** A number above 0 (durations that must not be zero). */
export function positive(value: number, what: string): number {
  if (value <= 0) throw new ConfigurationError(`${what} must be more than 0`);
  return value;
}

/** true or false, nothing truthy. */
export function checkBoolean(value: unknown, what: string): boolean {
  if (typeof value !== "boolean") throw new ConfigurationError(`${what} must be true or false, got ${shown(value)}`);
  return value;
}

/**
 * A command-line count: the text of a whole number of at least 1, or a ConfigurationError naming
 * the flag.
 */
export function wholeNumberArgument(text: string, what: string): number {
  return positiveInteger(digitsAsNumber(text), what);
}

/** A command-line or environment value that must be a whole number of at least 0. */
export function countOrZeroArgument(text: string, what: string): number {
  return nonNegativeInteger(digitsAsNumber(text), what);
}

/** The number a text of digits spells; any other text as it is, for the check to name. */
function digitsAsNumber(text: string): number | string {
  return /^\s*\d+\s*$/.test(text) ? Number(text) : text;
}
