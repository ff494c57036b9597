import type { SampleSnapshot } from "../metric-samples.js";
import type { RoleSpec } from "./role-table.js";

/** The environment variable carrying a child's {@link ChildSpec}, as JSON. */
export const CHILD_SPEC_VARIABLE = "FIRM_QUEUE_CHILD";

/** The method a FirmQueue instance runs a fork-mode child role with (found across package copies). */
export const RUN_CHILD = Symbol.for("firm-queue.runChild");

/** The FirmQueue instances constructed in a child, for job modules that do not export theirs. */
export const CHILD_INSTANCES = Symbol.for("firm-queue.childInstances");

/** Everything a fork-mode child needs to run its one role. */
export interface ChildSpec {
  /** The process name the supervisor chose: it finds the child's row by (name, supervisor id). */
  readonly name: string;
  readonly supervisorId: number;
  readonly role: RoleSpec;
  /** Absolute paths of the job modules to import. */
  readonly modules: readonly string[];
  /** The supervisor's database URL: the child's FirmQueue must use the same. */
  readonly databaseUrl: string;
  /** The supervisor's table prefix: the child's FirmQueue must use the same. */
  readonly tablePrefix: string;
  readonly heartbeatInterval: number;
  readonly shutdownTimeout: number;
  /** Count jobs and send the counts to the supervisor (it serves metrics). */
  readonly metrics?: boolean;
}

/** What a child tells its supervisor over the IPC channel. */
export type ChildMessage =
  | { readonly type: "started"; readonly processId: number }
  | { readonly type: "failed"; readonly message: string }
  /** The child's job counters and histograms so far (cumulative), sent when they changed. */
  | { readonly type: "metrics"; readonly samples: SampleSnapshot };

/** Send a message to the supervisor if it is still there; resolves once it is sent. */
export function tellSupervisor(message: ChildMessage): Promise<void> {
  return new Promise((resolve) => {
    if (!process.connected || !process.send) return resolve();
    process.send(message, undefined, {}, () => resolve());
  });
}
