import { expect, it } from "vitest";
import { fromPrisma } from "../src/index.js";
import { countRows, describeEachDatabase } from "./support/harness.js";
import { createOrdersTable, openPrisma } from "./support/prisma-client.js";

class Rollback extends Error {}

describeEachDatabase("enqueue inside a Prisma interactive transaction", (env) => {
  it("the job exists if and only if Prisma's transaction commits, beside the app's own row", async () => {
    const prisma = await openPrisma(env.dialect, env.url);
    try {
      await prisma.$executeRawUnsafe(createOrdersTable(env.dialect));
      const firm = env.firm();
      const job = firm.defineJob<{ orderId: number }>("confirm", async () => undefined, {
        concurrency: { key: (args) => String(args.orderId), to: 1 },
      });

      const committed = await prisma.$transaction(async (tx) => {
        const order = await tx.order.create({ data: { email: "ada@example.com" } });
        const now = (await job.enqueue({ orderId: order.id }, { transaction: fromPrisma(tx) })).id;
        const later = (await job.enqueue({ orderId: order.id }, { transaction: fromPrisma(tx), wait: "1h" })).id;
        return { order, now, later };
      });
      await expect(
        prisma.$transaction(async (tx) => {
          await tx.order.create({ data: { email: "bob@example.com" } });
          await job.enqueue({ orderId: 99 }, { transaction: fromPrisma(tx) });
          throw new Rollback("the app changed its mind");
        }),
      ).rejects.toThrow(Rollback);

      const db = await env.db();
      const jobs = await db.selectFrom("firm_queue_jobs").select(["id", "arguments"]).orderBy("id").execute();
      expect(jobs.map((row) => row.id)).toEqual([committed.now, committed.later]);
      expect(JSON.parse(jobs[0]!.arguments!)).toEqual({ orderId: committed.order.id });
      expect(await countRows(db, "firm_queue_ready_executions")).toBe(1);
      expect(await countRows(db, "firm_queue_scheduled_executions")).toBe(1);
      expect(await countRows(db, "firm_queue_semaphores")).toBe(1);
      const orders = (await db
        .selectFrom("app_orders" as never)
        .select("email" as never)
        .execute()) as { email: string }[];
      expect(orders.map((order) => order.email)).toEqual(["ada@example.com"]);
      expect(await firm.drain()).toBe(1);
    } finally {
      await prisma.$disconnect();
    }
  });
});
