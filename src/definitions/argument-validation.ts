import { ConfigurationError, InvalidJobArgumentsError, type ArgumentIssue } from "../errors.js";
import type { StandardSchema, StandardSchemaIssue } from "../standard-schema.js";

/** Check a declaration's `schema` option: anything implementing Standard Schema version 1. */
export function checkSchema(schema: unknown, what: string): StandardSchema | null {
  if (schema === undefined) return null;
  const props = (schema as { "~standard"?: { version?: unknown; validate?: unknown } } | null)?.["~standard"];
  if (typeof props !== "object" || props === null || props.version !== 1 || typeof props.validate !== "function") {
    throw new ConfigurationError(
      `${what} must be a Standard Schema (version 1), such as a zod or valibot schema, got ${describe(schema)}`,
    );
  }
  return schema as StandardSchema;
}

/**
 * Validate one job's arguments against its schema: the value the schema produces, or an
 * {@link InvalidJobArgumentsError} listing every issue. A schema that throws is reported the
 * same way (as one issue), so a broken schema cannot write half a batch.
 */
export async function validateArguments(
  jobName: string,
  schema: StandardSchema,
  args: unknown,
  stage: "enqueue" | "run",
  at?: number,
): Promise<unknown> {
  let result: Awaited<ReturnType<StandardSchema["~standard"]["validate"]>>;
  try {
    result = await schema["~standard"].validate(args);
  } catch (error) {
    const message = `the schema threw: ${(error as Error)?.message ?? String(error)}`;
    throw new InvalidJobArgumentsError(jobName, [{ path: "", message }], stage, at);
  }
  if (result.issues !== undefined) throw new InvalidJobArgumentsError(jobName, result.issues.map(toIssue), stage, at);
  return result.value;
}

function toIssue(issue: StandardSchemaIssue): ArgumentIssue {
  let path = "";
  for (const segment of issue.path ?? []) {
    const key = typeof segment === "object" && segment !== null ? segment.key : segment;
    if (typeof key === "number") path += `[${key}]`;
    else path += path === "" ? String(key) : `.${String(key)}`;
  }
  return { path, message: String(issue.message) };
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "object") return `an object without a valid "~standard" property`;
  return typeof value;
}
