import { expect, it } from "vitest";
import { ConfigurationError, type JobArguments } from "../src/index.js";
import { countRows, describeEachDatabase } from "./support/harness.js";

describeEachDatabase("out-of-range input", (env) => {
  it("refuses durations a timer cannot wait (a 30-day shutdown timeout would fire after 1 ms)", async () => {
    const firm = env.firm();
    await expect(firm.start({ shutdownTimeout: "30d" })).rejects.toThrow(ConfigurationError);
    await expect(firm.start({ workers: [{ pollingInterval: 2 ** 31 }] })).rejects.toThrow(ConfigurationError);
    await expect(firm.start({ processHeartbeatInterval: "25d", processAliveThreshold: "50d" })).rejects.toThrow(
      ConfigurationError,
    );
    expect(await countRows(await env.db(), "firm_queue_processes")).toBe(0);
    // Up to the timer's limit is fine.
    const supervisor = await firm.start({ shutdownTimeout: "24d", workers: [{ queues: "none" }], dispatchers: [] });
    await supervisor.stop();
  });

  it("refuses a wait or a time outside what every database can store, writing nothing", async () => {
    const firm = env.firm();
    firm.defineJob("later", async () => {});
    await expect(firm.enqueue("later", null, { wait: 1e20 })).rejects.toThrow(ConfigurationError);
    await expect(firm.enqueue("later", null, { at: new Date(Date.UTC(10_000, 0, 1)) })).rejects.toThrow(
      ConfigurationError,
    );
    await expect(firm.enqueue("later", null, { wait: "3000000d" })).rejects.toThrow(ConfigurationError);
    expect(await countRows(await env.db(), "firm_queue_jobs")).toBe(0);
    // The last storable year is accepted, and stays scheduled.
    const id = (await firm.enqueue("later", null, { at: new Date(Date.UTC(9999, 11, 31)) })).id;
    expect((await firm.getJob(id!))?.state).toBe("scheduled");
    expect(await firm.dispatch()).toBe(0);
  });

  it("keeps an own __proto__ key as plain data, both ways, never as a prototype", async () => {
    const firm = env.firm();
    const seen: unknown[] = [];
    firm.defineJob("proto", async (args: unknown) => void seen.push(args));
    const args = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as JobArguments;
    const id = (await firm.enqueue("proto", args)).id;
    // And a row written by another program with the key in its stored JSON.
    const db = await env.db();
    const other = (await firm.enqueue("proto", { a: 2 })).id;
    await db
      .updateTable("firm_queue_jobs")
      .set({ arguments: '{"__proto__": {"polluted": true}, "a": 2}' })
      .where("id", "=", other!)
      .execute();
    expect(await firm.drain()).toBe(2);
    expect(seen).toHaveLength(2);
    for (const received of seen as Record<string, unknown>[]) {
      expect(Object.getPrototypeOf(received)).toBe(Object.prototype);
      expect(Object.hasOwn(received, "__proto__")).toBe(true);
      expect(received.polluted).toBeUndefined();
      expect(Object.getOwnPropertyDescriptor(received, "__proto__")?.value).toEqual({ polluted: true });
    }
    expect(id).not.toBeNull();
  });
});
