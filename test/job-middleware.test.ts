import { AsyncLocalStorage } from "node:async_hooks";
import { expect, it } from "vitest";
import { ConfigurationError, MiddlewareError, type MiddlewareContext } from "../src/index.js";
import { describeEachDatabase } from "./support/harness.js";

class FlakyError extends Error {
  override name = "FlakyError";
}

describeEachDatabase("job middleware", (env) => {
  it("runs instance middleware outermost, in the order added, then the job's own, then the handler", async () => {
    const firm = env.firm();
    const trail: string[] = [];
    const around = (name: string) => async (_context: MiddlewareContext, next: () => Promise<unknown>) => {
      trail.push(`${name} in`);
      const result = await next();
      trail.push(`${name} out (${String(result)})`);
      return result;
    };
    firm.use(around("instance 1")).use(around("instance 2"));
    const job = firm.defineJob(
      "wrapped",
      async () => {
        trail.push("handler");
        return "result";
      },
      { middleware: [around("job 1"), around("job 2")] },
    );
    firm.defineJob("plain", async () => void trail.push("plain handler"));
    await job.enqueue(null);
    expect(await firm.drain()).toBe(1);
    expect(trail).toEqual([
      "instance 1 in",
      "instance 2 in",
      "job 1 in",
      "job 2 in",
      "handler",
      "job 2 out (result)",
      "job 1 out (result)",
      "instance 2 out (result)",
      "instance 1 out (result)",
    ]);
    trail.length = 0;
    await firm.enqueue("plain", null);
    await firm.drain();
    expect(trail).toEqual([
      "instance 1 in",
      "instance 2 in",
      "plain handler",
      "instance 2 out (undefined)",
      "instance 1 out (undefined)",
    ]);
  });

  it("gives middleware the job's context and arguments, and the handler's own AbortSignal", async () => {
    const firm = env.firm();
    let seen: MiddlewareContext | undefined;
    let handlerSignal: AbortSignal | undefined;
    firm.use(async (context, next) => {
      seen = context;
      await next();
    });
    const job = firm.defineJob(
      "inspected",
      async (_args: { n: number }, context) => {
        handlerSignal = context.signal;
      },
      { queue: "q1", priority: 4, timeout: "1m" },
    );
    const id = await job.enqueue({ n: 5 });
    await firm.drain();
    expect(seen).toMatchObject({ jobId: id, name: "inspected", queue: "q1", priority: 4, attempt: 1, args: { n: 5 } });
    expect(seen!.signal).toBe(handlerSignal);
  });

  it("errors reach the retry policy unchanged, from the handler or from a middleware", async () => {
    const firm = env.firm();
    const judged: unknown[] = [];
    const thrown = new FlakyError("from the handler");
    firm.use(async (_context, next) => {
      await next(); // rethrows the handler's error as it is
    });
    const job = firm.defineJob(
      "judged",
      async () => {
        throw thrown;
      },
      {
        retry: {
          attempts: 2,
          retryOn: (error) => {
            judged.push(error);
            return false;
          },
        },
      },
    );
    const id = await job.enqueue(null);
    await firm.drain();
    expect(judged).toEqual([thrown]);
    expect(judged[0]).toBe(thrown);
    expect((await firm.getJob(id))!.error).toMatchObject({ name: "FlakyError", message: "from the handler" });

    const replaced = new FlakyError("from a middleware");
    const discarding = firm.defineJob("replaced", async () => undefined, {
      retry: { attempts: 3, discardOn: (error) => error === replaced },
      middleware: [
        async () => {
          throw replaced;
        },
      ],
    });
    const other = await discarding.enqueue(null);
    await firm.drain();
    expect((await firm.getJob(other))!).toMatchObject({ state: "finished", attempts: 1 });
    expect((await firm.getJob(other))!.lastError).toMatchObject({ message: "from a middleware" });
  });

  it("a middleware that never calls next() skips the handler; the attempt ends as the middleware does", async () => {
    const firm = env.firm();
    let ran = false;
    const job = firm.defineJob("skipped", async () => void (ran = true), {
      middleware: [async () => undefined],
    });
    const id = await job.enqueue(null);
    expect(await firm.drain()).toBe(1);
    expect(ran).toBe(false);
    expect((await firm.getJob(id))!.state).toBe("finished");
  });

  it("a middleware calling next() twice fails the attempt with a MiddlewareError, the handler run once", async () => {
    const firm = env.firm();
    let runs = 0;
    const job = firm.defineJob("twice", async () => void runs++, {
      middleware: [
        async (_context, next) => {
          await next();
          await next();
        },
      ],
    });
    const id = await job.enqueue(null);
    await firm.drain();
    expect(runs).toBe(1);
    const info = (await firm.getJob(id))!;
    expect(info.state).toBe("failed");
    expect(info.error).toMatchObject({ name: "MiddlewareError" });
    expect(new MiddlewareError("twice", 0).message).toBe('Middleware 1 of job "twice" called next() more than once');
  });

  it("AsyncLocalStorage set in a middleware is visible in the handler", async () => {
    const firm = env.firm();
    const tenant = new AsyncLocalStorage<string>();
    firm.use((context, next) => tenant.run(`tenant-of-${(context.args as { account: string }).account}`, next));
    const seen: (string | undefined)[] = [];
    const job = firm.defineJob("tenanted", async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      seen.push(tenant.getStore());
    });
    await job.enqueueAll([{ account: "a" }, { account: "b" }]);
    await firm.drain({ concurrency: 2 });
    expect(seen.sort()).toEqual(["tenant-of-a", "tenant-of-b"]);
    expect(tenant.getStore()).toBeUndefined();
  });

  it("refuses middleware that is not a function, and registers nothing", async () => {
    const firm = env.firm();
    expect(() => firm.use("log" as never)).toThrow(ConfigurationError);
    expect(() => firm.defineJob("bad", async () => undefined, { middleware: "log" as never })).toThrow(
      /defineJob\("bad"\) option middleware must be an array of functions/,
    );
    expect(() => firm.defineJob("bad", async () => undefined, { middleware: [42 as never] })).toThrow(
      /option middleware\[0\] must be a function/,
    );
    expect(firm.jobNames).toEqual([]);
  });
});
