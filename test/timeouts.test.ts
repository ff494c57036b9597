import { expect, it } from "vitest";
import { TimeoutError } from "../src/index.js";
import { describeEachDatabase, waitFor } from "./support/harness.js";

describeEachDatabase("job timeouts", (env) => {
  it("past the timeout the handler's signal fires with a TimeoutError and the attempt fails with it", async () => {
    const firm = env.firm();
    const reasons: unknown[] = [];
    const job = firm.defineJob(
      "slowpoke",
      async (_args: null, { signal }) => {
        await new Promise<void>((_, reject) => {
          signal.addEventListener("abort", () => {
            reasons.push(signal.reason);
            reject(signal.reason as Error);
          });
        });
      },
      { timeout: 100 },
    );
    const id = (await job.enqueue(null)).id;
    await firm.drain();
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toBeInstanceOf(TimeoutError);
    const info = await firm.getJob(id);
    expect(info).toMatchObject({ state: "failed", attempts: 1, error: { name: "TimeoutError" } });
    expect(info?.error?.message).toContain("ran longer than its timeout of 100 ms");
  });

  it("a timed-out attempt is retried per the retry policy", async () => {
    const firm = env.firm();
    const attempts: number[] = [];
    const job = firm.defineJob(
      "sometimes-slow",
      async (_args: null, context) => {
        attempts.push(context.attempt);
        if (context.attempt === 1) await new Promise((resolve) => context.signal.addEventListener("abort", resolve));
      },
      { timeout: "100ms", retry: { attempts: 2, backoff: 0 } },
    );
    const id = (await job.enqueue(null)).id;
    await firm.drain();
    expect(attempts).toEqual([1, 2]);
    expect(await firm.getJob(id)).toMatchObject({
      state: "finished",
      attempts: 2,
      lastError: { name: "TimeoutError" },
    });
  });

  it("a handler that ignores its signal cannot finish the job after its timeout", async () => {
    const firm = env.firm();
    let ended = false;
    const job = firm.defineJob(
      "stubborn",
      async () => {
        await new Promise((resolve) => setTimeout(resolve, 600));
        ended = true;
      },
      { timeout: 100 },
    );
    const id = (await job.enqueue(null)).id;
    await firm.drain();
    // drain did not wait for the handler: the attempt failed when the timeout passed.
    expect(ended).toBe(false);
    expect(await firm.getJob(id)).toMatchObject({ state: "failed", attempts: 1, error: { name: "TimeoutError" } });
    await waitFor(() => ended, 5000, "the handler to end in the background");
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await firm.getJob(id)).toMatchObject({ state: "failed", attempts: 1, finishedAt: null });
  });

  it("a handler that ends in time is unaffected, and the timer does not outlive it", async () => {
    const firm = env.firm();
    const job = firm.defineJob("quick", async (_args: null, { signal }) => signal.aborted, { timeout: "5s" });
    const id = (await job.enqueue(null)).id;
    await firm.drain();
    expect(await firm.getJob(id)).toMatchObject({ state: "finished", attempts: 1 });
    expect((await firm.getJob(id))?.lastError).toBeUndefined();
  });

  it("the worker's shutdown still puts a job with a timeout back in line", async () => {
    const firm = env.firm();
    let started = false;
    const job = firm.defineJob(
      "interruptible",
      async (_args: null, { signal }) => {
        started = true;
        await new Promise<void>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason as Error)));
      },
      { timeout: "1m" },
    );
    const id = (await job.enqueue(null)).id;
    const supervisor = await firm.start({ workers: [{ pollingInterval: 20 }], dispatchers: [] });
    await waitFor(() => started, 10_000, "the job to start");
    await supervisor.stop();
    expect(await firm.getJob(id)).toMatchObject({ state: "ready", attempts: 0 });
  });
});
