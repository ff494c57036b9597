// Shared by the route handler (enqueues) and the worker (runs). In Next.js this would live in
// lib/, imported by route files and named by `firm-queue start --require`.
import { FirmQueue } from "firm-queue";
import { markConfirmed, openAppDatabase } from "../shared/app-database.mjs";

export const db = openAppDatabase(process.env.DATABASE_URL);
export const firm = new FirmQueue({ databaseUrl: process.env.DATABASE_URL });
export const confirmOrder = firm.defineJob("confirm-order", async ({ orderId }) => markConfirmed(db, orderId));
