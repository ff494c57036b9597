// The README's getting-started jobs module, as an app on another runtime has it.
import { FirmQueue } from "firm-queue";

export const firm = new FirmQueue({ databaseUrl: process.env.DATABASE_URL });

/** Which runtime ran a job, so the test can tell the job ran here and in which process. */
export function runtime() {
  return { bun: process.versions.bun ?? null, node: process.versions.node, pid: process.pid };
}

export const sendWelcomeEmail = firm.defineJob(
  "send-welcome-email",
  async (args, ctx) => ({ userId: args.userId, attempt: ctx.attempt, queue: ctx.queue, ...runtime() }),
  { queue: "mail" },
);
