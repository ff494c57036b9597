import { FirmQueueError } from "../errors.js";

/**
 * A database driver firm-queue needs but the application has not installed. Drivers are optional
 * peer dependencies: an app installs only the one for its database.
 */
export class MissingDriverError extends FirmQueueError {
  constructor(
    readonly packageName: string,
    purpose: string,
    options?: { cause?: unknown },
  ) {
    super(
      `firm-queue needs the "${packageName}" package for ${purpose}; install it with: npm install ${packageName}`,
      options,
    );
  }
}

/**
 * Load a driver on first use, turning "module not found" for that package into a
 * {@link MissingDriverError} that names it. `load` is a literal `import("…")`, so bundlers and
 * type-checkers still see which module it is.
 */
export async function importDriver<T>(packageName: string, purpose: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (isMissing(error, packageName)) throw new MissingDriverError(packageName, purpose, { cause: error });
    throw error;
  }
}

function isMissing(error: unknown, packageName: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") return false;
  // Only this package missing: a driver that is present but broken must show its own error.
  return typeof message === "string" && (message.includes(`'${packageName}'`) || message.includes(`"${packageName}"`));
}
