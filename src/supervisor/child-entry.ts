// The program a fork-mode supervisor starts for each role. Never imported by anything else.
import { FirmQueueError } from "../errors.js";
import { loadJobModules } from "../module-loader.js";
import { CHILD_INSTANCES, CHILD_SPEC_VARIABLE, RUN_CHILD, tellSupervisor, type ChildSpec } from "./child-protocol.js";

async function main(): Promise<void> {
  const spec = JSON.parse(process.env[CHILD_SPEC_VARIABLE] ?? "null") as ChildSpec | null;
  if (spec === null)
    throw new FirmQueueError(
      `child-entry is started by a fork-mode supervisor only (${CHILD_SPEC_VARIABLE} is not set)`,
    );
  // Not for processes the jobs may start in turn.
  delete process.env[CHILD_SPEC_VARIABLE];
  // FirmQueue instances constructed from here on are recorded, for job modules (a user script's
  // own module) that do not export theirs.
  const constructed: unknown[] = [];
  (globalThis as Record<symbol, unknown>)[CHILD_INSTANCES] = constructed;
  const firm = await loadJobModules<Record<symbol, (spec: ChildSpec) => Promise<void>>>(spec.modules, process.cwd(), {
    fallback: () => constructed,
  });
  // The instance may come from another copy of this package (the one the job modules import):
  // let that copy run the role.
  await firm[RUN_CHILD]!(spec);
}

main().catch(async (error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(
    `firm-queue[${process.pid}] child could not start: ${error instanceof FirmQueueError ? message : ((error as Error)?.stack ?? message)}\n`,
  );
  await tellSupervisor({ type: "failed", message });
  process.exit(1);
});
