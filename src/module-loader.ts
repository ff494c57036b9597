import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { ConfigurationError } from "./errors.js";

/**
 * Marks a FirmQueue instance, so the instance is recognised even when it comes from another copy
 * of this package (the one the job modules import) and without importing the class from below it.
 */
export const INSTANCE_BRAND: unique symbol = Symbol.for("firm-queue.instance") as never;

/** Whether `value` carries {@link INSTANCE_BRAND}. */
export function isBrandedInstance(value: unknown): value is object {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[INSTANCE_BRAND] === true;
}

/**
 * Import the modules that define an application's jobs (`.js`, `.mjs` or `.ts`, TypeScript
 * without a build step) and return the FirmQueue instance they define jobs on: a module's
 * default export or its export named `firm`. Modules that only define jobs on an instance
 * exported elsewhere are fine; exactly one instance must be found.
 */
export async function loadJobModules<Instance extends object>(
  paths: readonly string[],
  cwd: string = process.cwd(),
  options: {
    /** Instances to consider when no module exports one (fork-mode children). */ readonly fallback?: () => readonly unknown[];
  } = {},
): Promise<Instance> {
  if (paths.length === 0)
    throw new ConfigurationError(
      "No job modules given: pass --require <path> naming the module that defines your jobs",
    );
  const importModule = await moduleImporter(cwd);
  const instances = new Set<object>();
  for (const path of paths) {
    const absolute = resolve(cwd, path);
    if (!existsSync(absolute)) throw new ConfigurationError(`Job module not found: ${path} (looked at ${absolute})`);
    let exports: Record<string, unknown>;
    try {
      exports = (await importModule(absolute)) as Record<string, unknown>;
    } catch (error) {
      throw new ConfigurationError(`Could not load job module ${path}: ${(error as Error).message}`, { cause: error });
    }
    for (const candidate of [exports?.firm, exports?.default]) {
      if (isBrandedInstance(candidate)) instances.add(candidate);
    }
  }
  if (instances.size === 0 && options.fallback) {
    for (const candidate of options.fallback()) if (isBrandedInstance(candidate)) instances.add(candidate);
  }
  if (instances.size === 0) {
    throw new ConfigurationError(
      `None of ${paths.join(", ")} exports a FirmQueue instance: export it as the default export or as "firm"`,
    );
  }
  if (instances.size > 1) {
    throw new ConfigurationError(
      `${paths.join(", ")} export ${instances.size} different FirmQueue instances; export exactly one`,
    );
  }
  return [...instances][0] as Instance;
}

const TYPESCRIPT = /\.(?:ts|mts|cts|tsx)$/i;

/**
 * How to import a job module: Node's own `import()` for JavaScript, jiti for TypeScript. jiti is
 * loaded only when a TypeScript module is imported: it adds about 16 MB to a process's memory,
 * which every process importing firm-queue would otherwise pay.
 */
async function moduleImporter(cwd: string): Promise<(path: string) => Promise<unknown>> {
  let jiti: { import(path: string): Promise<unknown> } | undefined;
  return async (path) => {
    if (!TYPESCRIPT.test(path)) return import(pathToFileURL(path).href);
    if (jiti === undefined) {
      const { createJiti } = await import("jiti");
      jiti = createJiti(pathToFileURL(resolve(cwd, "firm-queue-loader")).href, {
        interopDefault: false,
        tryNative: true,
      });
    }
    return jiti.import(path);
  };
}
