// An Express app that enqueues inside the request's database transaction:
//   DATABASE_URL=sqlite:shop.sqlite3 node examples/express/server.mjs
//   DATABASE_URL=sqlite:shop.sqlite3 npx firm-queue start --require examples/express/jobs.mjs
//   curl -X POST localhost:3000/orders -H 'content-type: application/json' -d '{"email":"ada@example.com"}'
import { randomUUID } from "node:crypto";
import express from "express";
import { createOrdersTable, openAppDatabase, placeOrder } from "../shared/app-database.mjs";
import { confirmOrder, firm } from "./jobs.mjs";

const db = openAppDatabase(process.env.DATABASE_URL);
await firm.migrate();
await createOrdersTable(db);

const app = express();
app.use(express.json());

app.post("/orders", async (request, response, next) => {
  try {
    const result = await placeOrder(db, confirmOrder, { id: randomUUID(), email: request.body?.email });
    if (result.error) response.status(400).json(result);
    else response.status(201).json(result);
  } catch (error) {
    next(error);
  }
});

app.get("/orders/:id", async (request, response) => {
  const order = await db
    .selectFrom("example_orders")
    .selectAll()
    .where("id", "=", request.params.id)
    .executeTakeFirst();
  if (order) response.json(order);
  else response.status(404).json({ error: "no such order" });
});

const server = app.listen(Number(process.env.PORT ?? 3000), "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});

for (const signal of ["SIGTERM", "SIGINT"]) {
  process.once(signal, () =>
    server.close(async () => {
      await Promise.all([db.destroy(), firm.close()]);
    }),
  );
}
