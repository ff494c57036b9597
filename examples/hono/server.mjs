// A Hono app with its worker in the same process (async mode), served by Node's http module:
//   DATABASE_URL=sqlite:shop.sqlite3 node examples/hono/server.mjs
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { Readable } from "node:stream";
import { FirmQueue } from "firm-queue";
import { Hono } from "hono";
import { createOrdersTable, markConfirmed, openAppDatabase, placeOrder } from "../shared/app-database.mjs";

const db = openAppDatabase(process.env.DATABASE_URL);
// One pool for the app and the queue: firm-queue uses the app's Kysely and never closes it.
const firm = new FirmQueue({ database: db });
const confirmOrder = firm.defineJob("confirm-order", async ({ orderId }) => markConfirmed(db, orderId));
await firm.migrate();
await createOrdersTable(db);
const worker = await firm.start({ workers: [{ pollingInterval: "200ms" }] });

const app = new Hono();
app.post("/orders", async (c) => {
  const body = await c.req.json().catch(() => ({}));
  const result = await placeOrder(db, confirmOrder, { id: randomUUID(), email: body.email });
  return c.json(result, result.error ? 400 : 201);
});
app.get("/orders/:id", async (c) => {
  const order = await db
    .selectFrom("example_orders")
    .selectAll()
    .where("id", "=", c.req.param("id"))
    .executeTakeFirst();
  return order ? c.json(order) : c.json({ error: "no such order" }, 404);
});

// Node's http server speaking to Hono's fetch handler (what @hono/node-server does, in brief).
const server = createServer(async (req, res) => {
  const body = req.method === "GET" || req.method === "HEAD" ? undefined : Readable.toWeb(req);
  const request = new Request(`http://${req.headers.host}${req.url}`, {
    method: req.method,
    headers: req.headers,
    body,
    duplex: "half",
  });
  const response = await app.fetch(request);
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(Buffer.from(await response.arrayBuffer()));
});
server.listen(Number(process.env.PORT ?? 3000), "127.0.0.1", () =>
  console.log(`listening on http://127.0.0.1:${server.address().port}`),
);

for (const signal of ["SIGTERM", "SIGINT"]) {
  process.once(signal, () =>
    server.close(async () => {
      await worker.stop();
      await firm.close();
      await db.destroy();
    }),
  );
}
