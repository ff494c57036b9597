import type { JobArguments } from "./job-definition.js";

/**
 * The names of a FirmQueue's jobs, from its map of names to argument types
 * (`new FirmQueue<{ resize: { photo: string } }>()`): `string` for a FirmQueue without one.
 */
export type JobName<Jobs> = keyof Jobs & string;

/** Whether `Jobs` is a map that names its jobs (a FirmQueue without one takes any name). */
export type NamesJobs<Jobs> = string extends JobName<Jobs> ? false : true;

/**
 * `T` where every part of it is a value firm-queue can store as job arguments (as
 * {@link JobArguments}: JSON values, Date and bigint), with `never` in place of each part that
 * is not (a function, a Map, a Set, a symbol, `unknown`). Unlike `JobArguments` it takes
 * interfaces, which have no index signature: `enqueue(name, args)` of a FirmQueue without a
 * `Jobs` map checks its arguments with it.
 */
export type Storable<T> = [T] extends [JobArguments | undefined]
  ? T
  : T extends string | number | boolean | bigint | Date | null | undefined
    ? T
    : T extends ((...args: never[]) => unknown) | ReadonlyMap<unknown, unknown> | ReadonlySet<unknown> | RegExp
      ? never
      : T extends object
        ? { [Key in keyof T]: Storable<T[Key]> }
        : never;

/**
 * The `args` of `firm.enqueue(name, args)`: the job's arguments in the FirmQueue's `Jobs` map
 * when it has one; otherwise the arguments given (`Args`, inferred), where each part that cannot
 * be stored is a type error ({@link Storable}).
 */
export type EnqueueArgumentsOf<Jobs, Name extends keyof Jobs, Args> =
  NamesJobs<Jobs> extends true ? Jobs[Name] : Args & Storable<Args>;

/**
 * A job given by name with its arguments (`{ name, args }`, as `firm.batch` takes its jobs and
 * callbacks), with `Extra` fields: for a FirmQueue with a `Jobs` map, `name` one of its names and
 * `args` (required) that job's arguments; without one, any name and storable arguments (absent:
 * null).
 */
// biome-ignore lint/complexity/noBannedTypes: no extra fields by default
export type NamedJob<Jobs, Extra = {}> = {
  readonly [Name in JobName<Jobs>]: { readonly name: Name } & Extra &
    (NamesJobs<Jobs> extends true ? { readonly args: Jobs[Name] } : { readonly args?: JobArguments | undefined });
}[JobName<Jobs>];
