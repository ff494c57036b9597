// Declarations for postgres.mjs, so TypeScript (which has no allowJs here)
// can import it. Keep in step with the JSDoc there.
import type { RunningServer, ServerOptions } from "./types.js";

export type { RunningServer, ServerOptions };
/** Directory holding initdb, postgres and pg_isready, or null if not installed. */
export declare function postgresBinDir(): string | null;
/** Whether startPostgres() can work on this machine. */
export declare function postgresAvailable(): boolean;
/** Starts a throwaway server; url is postgres://postgres@127.0.0.1:PORT/postgres. */
export declare function startPostgres(options?: ServerOptions): Promise<RunningServer>;
