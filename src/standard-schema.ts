/*
 * The Standard Schema interface (version 1), declared here as types only: zod, valibot, arktype
 * and others implement it, so a job's `schema` may come from any of them without firm-queue
 * depending on one at run time. Only the members firm-queue reads are spelled out; a schema
 * object from such a library is assignable to {@link StandardSchema} as it is.
 */

/** A validation library's schema, seen through the Standard Schema interface. */
export interface StandardSchema<Input = unknown, Output = Input> {
  readonly "~standard": StandardSchemaProps<Input, Output>;
}

/** What a Standard Schema carries under its `~standard` key. */
export interface StandardSchemaProps<Input = unknown, Output = Input> {
  readonly version: 1;
  /** The library that made the schema, such as `"zod"`. */
  readonly vendor: string;
  /** Check a value: the parsed value, or the issues found. May answer asynchronously. */
  readonly validate: (value: unknown) => StandardSchemaResult<Output> | Promise<StandardSchemaResult<Output>>;
  /** Carries the input and output types for inference only; absent at run time. */
  readonly types?: { readonly input: Input; readonly output: Output } | undefined;
}

/** The answer of `validate`: a value, or issues. */
export type StandardSchemaResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: readonly StandardSchemaIssue[] };

/** One problem a schema found, and where. */
export interface StandardSchemaIssue {
  readonly message: string;
  readonly path?: readonly (PropertyKey | { readonly key: PropertyKey })[] | undefined;
}

/** The type a schema accepts (what `enqueue` takes). */
export type SchemaInput<S extends StandardSchema> = NonNullable<S["~standard"]["types"]>["input"];

/** The type a schema produces (what the handler gets). */
export type SchemaOutput<S extends StandardSchema> = NonNullable<S["~standard"]["types"]>["output"];
