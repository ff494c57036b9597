// Declarations for runtimes.mjs, so TypeScript (which has no allowJs here) can import it. Keep in
// step with the JSDoc there.

/** A runtime installed from its registry package. */
export interface Runtime {
  readonly name: string;
  readonly kind: "node" | "bun";
  /** The binary. */
  readonly bin: string;
  /** What `bin --version` printed. */
  readonly version: string;
}

/** The better-sqlite3 range installed for the other runtimes. */
export declare const BETTER_SQLITE3_RANGE: string;
/** The runtimes the script can install: node22, node24, bun. */
export declare function runtimeNames(): string[];
/** The cache directory (FIRM_QUEUE_RUNTIMES_DIR, or ~/.cache/firm-queue/runtimes). */
export declare function runtimesDir(): string;
/** Install (or find) one runtime. */
export declare function installRuntime(name: string): Promise<Runtime>;
/** better-sqlite3 13 in a directory of its own; resolves to the package directory. */
export declare function installBetterSqlite3(): Promise<string>;
