import { existsSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ConfigurationError } from "../errors.js";

/** How a fork-mode supervisor starts its children. */
export interface ChildLaunch {
  /** The child program (child-entry). */
  readonly entry: string;
  /** Node flags for the child: this process's own, so children run under the same loader. */
  readonly execArgv: readonly string[];
  /** Absolute paths of the job modules each child imports. */
  readonly modules: readonly string[];
}

/**
 * Decide what each child imports and how it is started. Job modules are the `require` start
 * option when given, else the files that created the FirmQueue and defined its jobs. A module
 * that is the running script itself cannot be imported again (that would run the script again
 * in every child), so that is refused here, before anything starts.
 */
export function resolveChildLaunch(
  required: readonly string[] | undefined,
  definitionFiles: readonly string[],
): ChildLaunch {
  const modules = required ? required.map((path) => resolve(path)) : [...new Set(definitionFiles)];
  if (modules.length === 0) {
    throw new ConfigurationError(
      'fork mode needs the modules that define your jobs, to import them in each child: pass start({ mode: "fork", require: ["./jobs.js"] })',
    );
  }
  for (const module of modules) {
    if (!existsSync(module)) throw new ConfigurationError(`fork mode: job module not found: ${module}`);
  }
  const script = process.argv[1] ? realpath(resolve(process.argv[1])) : undefined;
  const rerun = modules.find((module) => realpath(module) === script);
  if (rerun !== undefined) {
    throw new ConfigurationError(
      `fork mode would import ${rerun} in every child to learn your job definitions, but that file is the script being run, ` +
        "so each child would run it again. Move new FirmQueue() and your defineJob() calls into a module of their own and import it " +
        'from the script, or pass start({ mode: "fork", require: ["./path/to/jobs-module"] }).',
    );
  }
  const fromSource = import.meta.url.endsWith(".ts");
  const entry = fileURLToPath(new URL(fromSource ? "./child-entry.ts" : "./child-entry.js", import.meta.url));
  // Running from TypeScript sources (tests): the child needs a loader that understands them.
  // Debugger flags are left out: every child would try to listen on the supervisor's port.
  const inherited = process.execArgv.filter((flag) => !/^--inspect/.test(flag));
  const execArgv = fromSource ? [...inherited, "--import", jitiRegisterUrl()] : inherited;
  return { entry, execArgv, modules };
}

function jitiRegisterUrl(): string {
  const packageJson = createRequire(import.meta.url).resolve("jiti/package.json");
  return pathToFileURL(join(dirname(packageJson), "lib", "jiti-register.mjs")).href;
}

function realpath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
