// A Next.js App Router route handler (app/api/orders/route.js): a function from a Fetch API
// Request to a Response. Jobs run in a separate worker: `firm-queue start --require next-route/jobs.mjs`.
import { randomUUID } from "node:crypto";
import { createOrdersTable, placeOrder } from "../shared/app-database.mjs";
import { confirmOrder, db, firm } from "./jobs.mjs";

let ready;
/** Create the tables once per server process, on the first request. */
const setUp = () => (ready ??= firm.migrate().then(() => createOrdersTable(db)));

export async function POST(request) {
  await setUp();
  const body = await request.json().catch(() => ({}));
  const result = await placeOrder(db, confirmOrder, { id: randomUUID(), email: body.email });
  return Response.json(result, { status: result.error ? 400 : 201 });
}
