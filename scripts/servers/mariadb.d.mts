// Declarations for mariadb.mjs, so TypeScript (which has no allowJs here)
// can import it. Keep in step with the JSDoc there.
import type { RunningServer, ServerOptions } from "./types.js";

export type { RunningServer, ServerOptions };
/** Paths of mariadbd and mariadb-install-db, or null if not installed. */
export declare function mariadbBinaries(): { server: string; installDb: string } | null;
/** Whether startMariadb() can work on this machine. */
export declare function mariadbAvailable(): boolean;
/** Starts a throwaway server; url is mysql://root@127.0.0.1:PORT/. */
export declare function startMariadb(options?: ServerOptions): Promise<RunningServer>;
