import { DeserializationError, SerializationError } from "./errors.js";

/**
 * Job arguments are stored as JSON text. Plain JSON values pass through unchanged; `Date` and
 * `bigint`, which JSON cannot hold, are written as small tagged objects `{ "$firm": tag, "v": … }`.
 * A plain object that happens to own a `$firm` key is wrapped the same way, so any plain value
 * round-trips exactly. Everything else is refused before anything is written.
 */
const TAG = "$firm";

type Tagged = { [TAG]: "date" | "bigint" | "object"; v: unknown };

/** Encode job arguments as JSON text, or throw {@link SerializationError} naming the bad path. */
export function serializeArguments(jobName: string, value: unknown): string {
  const input = value === undefined ? null : value;
  try {
    // Plain JSON, the usual arguments, is written as it is: no copy to make, for each job of a batch.
    if (isPlainJson(input, 0)) return JSON.stringify(input);
    return JSON.stringify(encode(input, "arguments", jobName, new Set()));
  } catch (error) {
    if (error instanceof SerializationError) throw error;
    // A getter or a proxy trap that throws while the arguments are read: they are not data.
    throw new SerializationError(jobName, "arguments", `could not be read: ${(error as Error)?.message ?? error}`, {
      cause: error,
    });
  }
}

/**
 * Deepest nesting of arrays and objects stored: far beyond any real arguments, and well within
 * the stack of every recursive walk over them (this one, reading them back, the dashboard's view).
 */
export const MAX_ARGUMENT_DEPTH = 500;

/** Nesting beyond which {@link isPlainJson} gives up (a cycle would nest forever). */
const PLAIN_DEPTH = 64;

/**
 * Whether `JSON.stringify(value)` writes exactly what encoding it would: only strings, booleans,
 * finite numbers, null, arrays and plain objects without the tag key or symbol keys, no deeper
 * than {@link PLAIN_DEPTH}. Anything else takes the full encoding, which tags Dates and bigints,
 * and names the path of what it refuses. (A getter is read twice, here and by `JSON.stringify`,
 * where the full encoding reads it once: arguments are data, and a getter whose value changes
 * between reads is written as its second read.)
 */
function isPlainJson(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(value);
    case "object":
      break;
    default:
      return false;
  }
  if (value === null) return true;
  if (depth >= PLAIN_DEPTH) return false;
  const prototype = Object.getPrototypeOf(value);
  if (prototype === Array.prototype) {
    const array = value as unknown[];
    // A hole reads as undefined: the full encoding decides what it means.
    for (let index = 0; index < array.length; index++) if (!isPlainJson(array[index], depth + 1)) return false;
    return true;
  }
  if (prototype !== Object.prototype && prototype !== null) return false;
  if (Object.hasOwn(value, TAG) || Object.getOwnPropertySymbols(value).length > 0) return false;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const item = (value as Record<string, unknown>)[key];
    // An absent optional property is dropped by both.
    if (item !== undefined && !isPlainJson(item, depth + 1)) return false;
  }
  return true;
}

/** Decode JSON text written by {@link serializeArguments}. */
export function deserializeArguments(text: string | null): unknown {
  if (text === null) return null;
  try {
    return decode(JSON.parse(text));
  } catch (error) {
    throw new DeserializationError(`Stored job arguments are not valid: ${(error as Error).message}`, { cause: error });
  }
}

function encode(value: unknown, path: string, jobName: string, ancestors: Set<object>): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      if (!Number.isFinite(value)) throw new SerializationError(jobName, path, `is ${value}, which JSON cannot hold`);
      return value;
    case "bigint":
      return { [TAG]: "bigint", v: value.toString() };
    case "undefined":
      throw new SerializationError(jobName, path, "is undefined, which JSON cannot hold in this position");
    case "function":
    case "symbol":
      throw new SerializationError(jobName, path, `is a ${typeof value}, which cannot be stored`);
  }
  if (value === null) return null;
  const object = value as object;
  if (ancestors.has(object)) throw new SerializationError(jobName, path, "refers back to itself (a cycle)");
  if (ancestors.size >= MAX_ARGUMENT_DEPTH)
    throw new SerializationError(jobName, "arguments", `nest deeper than ${MAX_ARGUMENT_DEPTH} levels`);
  if (object instanceof Date) {
    if (Number.isNaN(object.getTime())) throw new SerializationError(jobName, path, "is an invalid Date");
    return { [TAG]: "date", v: object.toISOString() };
  }
  ancestors.add(object);
  try {
    if (Array.isArray(object))
      return object.map((item, index) => encode(item, `${path}[${index}]`, jobName, ancestors));
    const prototype = Object.getPrototypeOf(object);
    if (prototype !== Object.prototype && prototype !== null) {
      const kind =
        (object as { constructor?: { name?: string } }).constructor?.name ?? "object with a custom prototype";
      throw new SerializationError(
        jobName,
        path,
        `is a ${kind}; only plain objects, arrays, strings, numbers, booleans, null, Date and bigint can be stored`,
      );
    }
    if (Object.getOwnPropertySymbols(object).length > 0) {
      throw new SerializationError(jobName, path, "has symbol keys, which cannot be stored");
    }
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(object)) {
      // An absent optional property is common in typed code; it is dropped, as JSON.stringify does.
      if (item === undefined) continue;
      setOwn(out, key, encode(item, `${path}.${key}`, jobName, ancestors));
    }
    return Object.hasOwn(out, TAG) ? { [TAG]: "object", v: out } : out;
  } finally {
    ancestors.delete(object);
  }
}

function decode(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(decode);
  const record = value as Record<string, unknown>;
  if (Object.hasOwn(record, TAG)) {
    const tagged = record as Tagged;
    switch (tagged[TAG]) {
      // Checked, not trusted: text altered by hand must not decode to an invalid Date, 0n or {}.
      case "date": {
        const date = new Date(typeof tagged.v === "string" ? tagged.v : Number.NaN);
        if (Number.isNaN(date.getTime()))
          throw new DeserializationError(`a date tag holds ${JSON.stringify(tagged.v)}`);
        return date;
      }
      case "bigint":
        if (typeof tagged.v !== "string" || !/^-?\d+$/.test(tagged.v))
          throw new DeserializationError(`a bigint tag holds ${JSON.stringify(tagged.v)}`);
        return BigInt(tagged.v);
      case "object":
        if (typeof tagged.v !== "object" || tagged.v === null || Array.isArray(tagged.v))
          throw new DeserializationError(`an object tag holds ${JSON.stringify(tagged.v)}`);
        return decodeEntries(tagged.v as Record<string, unknown>);
      default:
        throw new Error(`unknown tag ${JSON.stringify(tagged[TAG])}`);
    }
  }
  return decodeEntries(record);
}

function decodeEntries(record: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(record)) setOwn(out, key, decode(item));
  return out;
}

/**
 * `out[key] = value`, except that a `__proto__` key becomes an own property holding plain data,
 * as JSON.parse makes it, instead of replacing the object's prototype.
 */
function setOwn(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__")
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

/**
 * Decode stored arguments for display (getJob, listings): damaged text comes back as the raw text
 * instead of throwing, so looking at a job always works.
 */
export function readableArguments(text: string | null): unknown {
  try {
    return deserializeArguments(text);
  } catch {
    return text;
  }
}
