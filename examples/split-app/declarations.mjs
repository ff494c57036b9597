// The jobs this app has, declared without their handlers: the web process imports this file to
// enqueue (validated by the schema, limited by the concurrency key) and never loads the worker's
// code or what it depends on. The worker imports it too, and attaches the handlers (worker.mjs).
import { FirmQueue } from "firm-queue";
import { z } from "zod";

export const firm = new FirmQueue({ databaseUrl: process.env.DATABASE_URL });

export const sendReceipt = firm.declareJob("send-receipt", {
  schema: z.object({ orderId: z.string().min(1), email: z.string().email(), copies: z.number().int().default(1) }),
  queue: "mail",
  retry: { attempts: 3, backoff: "5s" },
  // One receipt at a time per address, enforced at enqueue in the web process too.
  concurrency: { key: (args) => args.email, to: 1 },
});
