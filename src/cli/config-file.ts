import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { ConfigurationError } from "../errors.js";
import { shown } from "../shown-value.js";

/** File names `firm-queue start` and `check` look for in the current directory, in this order. */
export const CONFIG_FILE_NAMES = [
  "firm-queue.config.ts",
  "firm-queue.config.mts",
  "firm-queue.config.js",
  "firm-queue.config.mjs",
  "firm-queue.config.cjs",
] as const;

/** A config module's contents, not yet checked. */
export interface LoadedConfigFile {
  /** Absolute path of the file. */
  readonly path: string;
  /** Its default export (or what its default-exported function returned). */
  readonly contents: unknown;
}

/**
 * Find the config file: `explicit` (from --config or FIRM_QUEUE_CONFIG) must exist; otherwise
 * the first of {@link CONFIG_FILE_NAMES} in `cwd`, or undefined when there is none.
 */
export function findConfigFile(explicit: string | undefined, cwd: string = process.cwd()): string | undefined {
  if (explicit !== undefined) {
    const path = resolve(cwd, explicit);
    if (!existsSync(path)) throw new ConfigurationError(`Config file not found: ${explicit} (looked at ${path})`);
    return path;
  }
  return CONFIG_FILE_NAMES.map((name) => resolve(cwd, name)).find((path) => existsSync(path));
}

/**
 * Import a config module (TypeScript too, without a build step). Its default export is the
 * config object, or a function (possibly async) returning it.
 */
export async function loadConfigFile(path: string): Promise<LoadedConfigFile> {
  // Loaded here, not at the top: jiti costs every process importing firm-queue about 16 MB.
  const { createJiti } = await import("jiti");
  const jiti = createJiti(pathToFileURL(resolve(dirname(path), "firm-queue-config-loader")).href, {
    interopDefault: false,
    tryNative: true,
  });
  let exports: Record<string, unknown>;
  try {
    exports = (await jiti.import(path)) as Record<string, unknown>;
  } catch (error) {
    // One line: a parse error's message puts the file's line and column on a line of its own.
    const reason = (error as Error).message.replace(/\s*\n\s*/g, " ");
    throw new ConfigurationError(`Could not load config file ${path}: ${reason}`, { cause: error });
  }
  let contents = exports?.default;
  if (contents === undefined)
    throw new ConfigurationError(`Config file ${path} has no default export: export default { … }`);
  if (typeof contents === "function") {
    try {
      contents = await (contents as () => unknown)();
    } catch (error) {
      // The app's own code failed: say where, as one line, instead of a stack from inside the CLI.
      const reason = error instanceof Error ? `${error.name}: ${error.message}` : shown(error);
      throw new ConfigurationError(`Config file ${path}: its default-exported function threw ${reason}`, {
        cause: error,
      });
    }
  }
  return { path, contents };
}
