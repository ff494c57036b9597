import { expect, it } from "vitest";
import {
  ConfigurationError,
  DuplicateJobError,
  JobNotImplementedError,
  UndeclaredJobError,
  UnknownJobError,
} from "../src/index.js";
import { countRows, describeEachDatabase } from "./support/harness.js";

describeEachDatabase("job declarations apart from handlers", (env) => {
  it("a web process enqueues a declared job with its options; the worker implements and runs it", async () => {
    const web = env.firm();
    const sendEmail = web.declareJob<{ to: string }>("send-email", { queue: "mail", priority: 4 });
    const id = (await sendEmail.enqueue({ to: "ada@example.com" })).id;
    expect(await web.getJob(id)).toMatchObject({ name: "send-email", queue: "mail", priority: 4, state: "ready" });

    const worker = env.firm();
    const seen: string[] = [];
    const declared = worker.declareJob<{ to: string }>("send-email", { queue: "mail", priority: 4 });
    const implemented = worker.implement(declared, async ({ to }) => void seen.push(to));
    expect(implemented).toBe(declared);
    expect(await worker.drain()).toBe(1);
    expect(seen).toEqual(["ada@example.com"]);
    expect((await worker.getJob(id))?.state).toBe("finished");
  });

  it("the declaration's concurrency limit applies to an enqueue from a process without the handler", async () => {
    const web = env.firm();
    const sync = web.declareJob<{ account: number }>("sync-account", {
      concurrency: { key: (args) => args.account, to: 1 },
    });
    const first = (await sync.enqueue({ account: 7 })).id;
    const second = (await sync.enqueue({ account: 7 })).id;
    const other = (await web.enqueue("sync-account", { account: 8 })).id;
    expect((await web.getJob(first))?.state).toBe("ready");
    expect((await web.getJob(second))?.state).toBe("blocked");
    expect((await web.getJob(other!))?.state).toBe("ready");
    expect(await countRows(await env.db(), "firm_queue_blocked_executions")).toBe(1);
  });

  it("enqueue by name of an undeclared job fails with UndeclaredJobError and writes nothing, unless undeclared: true", async () => {
    const web = env.firm();
    web.declareJob("known", {});
    const attempt = web.enqueue("elsewhere", { n: 1 });
    await expect(attempt).rejects.toThrow(UndeclaredJobError);
    await expect(web.enqueue("elsewhere", { n: 1 })).rejects.toThrow(
      /not declared in this process \(declared here: known\)/,
    );
    expect(await countRows(await env.db(), "firm_queue_jobs")).toBe(0);
    await expect(web.enqueue("elsewhere", null, { undeclared: "yes" as unknown as boolean })).rejects.toThrow(
      ConfigurationError,
    );
    const id = (await web.enqueue("elsewhere", { n: 1 }, { undeclared: true, queue: "q2" })).id;
    expect(await web.getJob(id!)).toMatchObject({ name: "elsewhere", queue: "q2", arguments: { n: 1 } });
  });

  it("a worker that claims a declared job without a handler fails it with JobNotImplementedError", async () => {
    const firm = env.firm();
    const report = firm.declareJob<{ n: number }>("report");
    const id = (await report.enqueue({ n: 1 })).id;
    expect(await firm.drain()).toBe(1);
    const job = await firm.getJob(id);
    expect(job?.state).toBe("failed");
    expect(job?.error?.name).toBe(JobNotImplementedError.name);
    expect(job?.error?.message).toMatch(/declared but has no handler in this process/);
    expect(new JobNotImplementedError("a", [])).toBeInstanceOf(UnknownJobError);
  });

  it("defineJob still declares and implements in one call", async () => {
    const firm = env.firm();
    const seen: number[] = [];
    const job = firm.defineJob("both", async (args: { n: number }) => void seen.push(args.n), { queue: "q" });
    await job.enqueue({ n: 3 });
    await firm.drain();
    expect(seen).toEqual([3]);
    expect(() => firm.implement(job, async () => {})).toThrow(DuplicateJobError);
  });

  it("refuses a second declaration, a second handler, and a job declared on another instance", async () => {
    const firm = env.firm();
    const job = firm.declareJob("once");
    expect(() => firm.declareJob("once")).toThrow(DuplicateJobError);
    firm.implement(job, async () => {});
    expect(() => firm.implement(job, async () => {})).toThrow(/already has a handler/);
    const other = env.firm().declareJob("stranger");
    expect(() => firm.implement(other, async () => {})).toThrow(ConfigurationError);
    const sameName = env.firm().declareJob("once");
    expect(() => firm.implement(sameName, async () => {})).toThrow(/declared on another instance/);
    expect(() => firm.implement(firm.declareJob("no-handler"), "nope" as never)).toThrow(/needs a handler function/);
    expect(() => firm.declareJob("bad", { queue: "a b" })).toThrow(/declareJob\("bad"\) option queue/);
    expect(() => firm.declareJob("bad", { handler: () => {} } as never)).toThrow(
      /Unknown declareJob\("bad"\) option "handler"/,
    );
  });
});
