// Declarations for pgbouncer.mjs, so TypeScript can import it. Keep in step with the JSDoc there.
import type { RunningServer, ServerOptions } from "./types.js";

export type { RunningServer, ServerOptions };
/** Whether startPgBouncer() can work on this machine. */
export declare function pgbouncerAvailable(): boolean;
/** Starts PgBouncer in transaction mode in front of `targetUrl`; url points at it, same user and database. */
export declare function startPgBouncer(targetUrl: string, options?: ServerOptions): Promise<RunningServer>;
