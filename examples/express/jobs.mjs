// The Express example's jobs, shared by the web process (which enqueues) and the worker
// (`firm-queue start --require examples/express/jobs.mjs`, which runs them).
import { FirmQueue } from "firm-queue";
import { markConfirmed, openAppDatabase } from "../shared/app-database.mjs";

const url = process.env.DATABASE_URL;
export const firm = new FirmQueue({ databaseUrl: url });

let db;
export const confirmOrder = firm.defineJob("confirm-order", async ({ orderId, email }, context) => {
  db ??= openAppDatabase(url);
  await markConfirmed(db, orderId);
  firm.options.logger.info("order confirmed", { orderId, email, jobId: context.jobId });
});
