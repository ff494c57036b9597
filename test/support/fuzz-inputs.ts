import fc from "fast-check";
import { expect } from "vitest";
import { FirmQueueError } from "../../src/index.js";
import type { Db } from "../../src/database/dialect.js";
import { FUZZ_RUNS } from "./hostile-requests.js";

/*
 * What the property tests of bad input share: hostile values of every kind (text a database
 * cannot store, numbers out of range, objects that are not data), the rule every refusal must
 * follow (a named FirmQueueError subclass), and a snapshot of every table to show that a refused
 * call wrote nothing. The run count and seed come from FIRM_QUEUE_FUZZ_RUNS / FIRM_QUEUE_FUZZ_SEED
 * (test/support/hostile-requests.ts).
 */

/** Characters that break storage or meaning: NUL (PostgreSQL text cannot hold it), lone surrogates (no UTF-8 form), separators, wildcards. */
const NASTY_UNITS = ["\0", "\uD800", "\uDBFF", "\uDC00", "\uDFFF", " ", "\t", "\n", ",", "*", "/", "%", "'", '"', "\\"];

/** Text of any kind: mostly short, sometimes with nasty characters, sometimes too long. */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.string({
      unit: fc.oneof(
        fc.constantFrom(...NASTY_UNITS),
        fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 1 }),
      ),
      maxLength: 10,
    }),
  },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 10 }) },
  { weight: 1, arbitrary: fc.constantFrom("", " ", "a\0b", "\uD800x", "x\uDC00", "名前", "😀", "a".repeat(256)) },
  { weight: 1, arbitrary: fc.string({ minLength: 250, maxLength: 260 }) },
);

/** Numbers that are no count, priority or id: fractions, NaN, infinities, huge and negative values. */
export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.constantFrom(0, -1, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, Number.MAX_VALUE, -0, 1e20, Number.NaN, Infinity, -Infinity),
);

/** Objects that are not data, by name: made fresh by {@link materialize}, since fast-check cannot print or copy some of them. */
const HOSTILE_OBJECTS: Record<string, () => unknown> = {
  map: () => new Map([[1, 2]]),
  set: () => new Set([1]),
  "invalid date": () => new Date(Number.NaN),
  regexp: () => /re/,
  "class instance": () => new (class Point {})(),
  "typed array": () => new Uint8Array(2),
  "null prototype": () => Object.create(null),
  cycle: () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    return cycle;
  },
  "symbol key": () => ({ [Symbol("s")]: 1 }),
  "toJSON to undefined": () => ({ toJSON: () => undefined }),
  "3000 levels deep": () => deeplyNested(3000),
  symbol: () => Symbol("alone"),
  function: () => () => 1,
  "huge bigint": () => 10n ** 30n,
};

/**
 * Objects that throw when read: only for job arguments, which firm-queue reads to store them. An
 * option object or list that throws when read is the caller's own error, and reaches the caller.
 */
const TRAP_OBJECTS: Record<string, () => unknown> = {
  "throwing getter": () => ({
    get boom(): never {
      throw new TypeError("a getter that throws");
    },
  }),
  "revoked proxy": () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    return proxy;
  },
};

/** A stand-in for one of {@link HOSTILE_OBJECTS}, printable by fast-check. */
class Hostile {
  constructor(readonly name: string) {}
  [fc.toStringMethod](): string {
    return `hostile(${this.name})`;
  }
}

export const hostileObject: fc.Arbitrary<unknown> = fc
  .constantFrom(...Object.keys(HOSTILE_OBJECTS))
  .map((name) => new Hostile(name));

/** The stand-in for a hostile object by name, for a property's fixed examples. */
export function hostile(name: keyof typeof HOSTILE_OBJECTS | keyof typeof TRAP_OBJECTS): unknown {
  if (!(name in HOSTILE_OBJECTS) && !(name in TRAP_OBJECTS)) throw new Error(`no hostile object named ${name}`);
  return new Hostile(name);
}

/** Argument values that throw when read (a getter, a revoked proxy). */
export const trapObject: fc.Arbitrary<unknown> = fc
  .constantFrom(...Object.keys(TRAP_OBJECTS))
  .map((name) => new Hostile(name));

/**
 * `value` with each stand-in made into its hostile object (arrays and plain objects copied on
 * the way); run it on a fuzzed input inside the property, just before the call.
 */
export function materialize<T>(value: T): T {
  if (value instanceof Hostile) return (HOSTILE_OBJECTS[value.name] ?? TRAP_OBJECTS[value.name])!() as T;
  if (Array.isArray(value)) return value.map(materialize) as T;
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      if (key === "__proto__") Object.defineProperty(out, key, { value: materialize(item), enumerable: true });
      else out[key] = materialize(item);
    }
    return out as T;
  }
  return value;
}

/** `depth` arrays inside each other: enough to overflow a recursive walk. */
function deeplyNested(depth: number): unknown {
  let value: unknown = [];
  for (let level = 0; level < depth; level++) value = [value];
  return value;
}

/** Any value at all: JSON, JavaScript values JSON has no form for, hostile text, numbers and objects. */
export const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 2, arbitrary: fc.jsonValue() },
  { weight: 2, arbitrary: fc.anything({ withBigInt: true, withDate: true, withMap: true, withSet: true }) },
  { weight: 1, arbitrary: hostileText },
  { weight: 1, arbitrary: hostileNumber },
  { weight: 1, arbitrary: hostileObject },
  { weight: 1, arbitrary: fc.constantFrom(undefined, null, true, false, [], {}) },
);

/** A value for an option: mostly plausible (to get past the first check), sometimes anything. */
export function optionValue<T>(plausible: fc.Arbitrary<T>): fc.Arbitrary<T | unknown> {
  return fc.oneof({ weight: 2, arbitrary: plausible }, { weight: 1, arbitrary: anyValue });
}

/**
 * An options object built from `fields` (each key present or not), sometimes with an unknown
 * key, sometimes not an object at all.
 */
export function hostileOptions(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<unknown> {
  const record = fc.record(fields, { requiredKeys: [] });
  return fc.oneof(
    { weight: 6, arbitrary: record },
    {
      weight: 1,
      arbitrary: fc
        .tuple(record, hostileText, anyValue)
        .map(([options, key, value]) => ({ ...(options as object), [key]: value })),
    },
    { weight: 1, arbitrary: anyValue },
  );
}

/**
 * The outcome of a call that may refuse its input: `accepted` with its value, or the error it
 * threw, which must be a FirmQueueError subclass (never the base class itself, a TypeError, a
 * RangeError or a bare Error).
 */
export async function outcome<T>(
  call: () => T | Promise<T>,
  what: () => string,
): Promise<{ accepted: true; value: T } | { accepted: false; error: FirmQueueError }> {
  try {
    return { accepted: true, value: await call() };
  } catch (error) {
    expectNamedError(error, what);
    return { accepted: false, error: error as FirmQueueError };
  }
}

/** Assert that `error` is a named firm-queue error, with the call that threw it in the message. */
export function expectNamedError(error: unknown, what: () => string): void {
  const describe = () =>
    `${what()}\nthrew ${error instanceof Error ? `${error.constructor.name}: ${error.message}\n${error.stack}` : String(error)}`;
  expect(error instanceof FirmQueueError, describe()).toBe(true);
  expect((error as Error).constructor, describe()).not.toBe(FirmQueueError);
}

/** Every firm-queue table, for {@link tableCounts}. */
const TABLES = [
  "firm_queue_jobs",
  "firm_queue_ready_executions",
  "firm_queue_claimed_executions",
  "firm_queue_scheduled_executions",
  "firm_queue_blocked_executions",
  "firm_queue_failed_executions",
  "firm_queue_pauses",
  "firm_queue_processes",
  "firm_queue_recurring_tasks",
  "firm_queue_recurring_executions",
  "firm_queue_semaphores",
  "firm_queue_job_keys",
] as const;

/** The row count of every firm-queue table, and each semaphore's value: what a refused call must leave as it was. */
export async function tableCounts(db: Db): Promise<Record<string, number | string>> {
  // One statement, one round trip: the fuzz runs this twice per case.
  const row = (await db
    .selectNoFrom((eb) =>
      TABLES.map((table) =>
        eb
          .selectFrom(table as "firm_queue_jobs")
          .select((inner) => inner.fn.countAll<number>().as("count"))
          .as(table),
      ),
    )
    .executeTakeFirstOrThrow()) as Record<string, unknown>;
  const counts: Record<string, number | string> = {};
  for (const table of TABLES) counts[table] = Number(row[table]);
  const semaphores = await db.selectFrom("firm_queue_semaphores").select(["key", "value"]).orderBy("key").execute();
  counts.semaphoreValues = semaphores.map((semaphore) => `${semaphore.key}=${semaphore.value}`).join(",");
  return counts;
}

/**
 * A property test's time limit: each case here costs a few statements more than a request of the
 * dashboard fuzz, and a long run (FIRM_QUEUE_FUZZ_RUNS) on a busy machine takes minutes.
 */
export const FUZZ_CASE_TIMEOUT_MS = Math.max(60_000, FUZZ_RUNS * 300);

/** A short description of a fuzzed value for failure messages (fast-check prints the counterexample too). */
export function show(value: unknown): string {
  try {
    return fc.stringify(value).slice(0, 400);
  } catch {
    return String(value);
  }
}
