// Declarations for pgbouncer.mjs, so TypeScript (which has no allowJs here)
// can import it. Keep in step with the JSDoc there.
import type { RunningServer } from "./types.js";

export type { RunningServer };
/** Path of the pgbouncer binary, or null if not installed. */
export declare function pgbouncerBinary(): string | null;
/** Starts PgBouncer (transaction pooling) in front of `serverUrl`; url is postgres://postgres@127.0.0.1:PORT/. */
export declare function startPgbouncer(options: {
  serverUrl: string;
  poolSize?: number;
  roundRobin?: boolean;
  timeoutMs?: number;
}): Promise<RunningServer>;
