import { dispatchContext } from "../src/lifecycle/dispatch-context.js";
import { expect, it } from "vitest";
import { UnrecoverableError } from "../src/index.js";
import { recordFailedAttempt } from "../src/lifecycle/failed-attempt.js";
import { claimJobs } from "../src/roles/claims.js";
import { QueueSelector } from "../src/roles/queue-selector.js";
import { registerProcess } from "../src/models/process.js";
import { removeClaim } from "../src/lifecycle/claimed-jobs.js";
import { countRows, describeEachDatabase } from "./support/harness.js";
import { databaseNow, fastForward } from "./support/database-clock.js";

class FlakyError extends Error {
  override name = "FlakyError";
}

describeEachDatabase("retries", (env) => {
  it("a job that fails twice then succeeds runs three times and ends finished, with no failed row", async () => {
    const firm = env.firm();
    const attempts: number[] = [];
    const job = firm.defineJob(
      "flaky",
      async (_args: null, context) => {
        attempts.push(context.attempt);
        if (context.attempt < 3) throw new FlakyError(`attempt ${context.attempt} failed`);
      },
      { retry: { attempts: 5, backoff: 0 } },
    );
    const id = (await job.enqueue(null)).id;
    expect(await firm.drain()).toBe(3);
    expect(attempts).toEqual([1, 2, 3]);
    const info = await firm.getJob(id);
    expect(info).toMatchObject({ state: "finished", attempts: 3 });
    expect(info?.error).toBeUndefined();
    expect(info?.lastError).toMatchObject({ name: "FlakyError", message: "attempt 2 failed" });
    expect(await countRows(await env.db(), "firm_queue_failed_executions")).toBe(0);
  });

  it("a job that uses up its attempts lands in failed executions with the last error", async () => {
    const firm = env.firm();
    let runs = 0;
    const job = firm.defineJob(
      "doomed",
      async (_args: null, context) => {
        runs++;
        throw new FlakyError(`attempt ${context.attempt} of 3`);
      },
      { retry: { attempts: 3, backoff: 0 } },
    );
    const id = (await job.enqueue(null)).id;
    await firm.drain();
    expect(runs).toBe(3);
    const info = await firm.getJob(id);
    expect(info).toMatchObject({ state: "failed", attempts: 3, finishedAt: null });
    expect(info?.error).toMatchObject({ name: "FlakyError", message: "attempt 3 of 3" });
    expect(info?.lastError).toEqual(info?.error);
    expect(await countRows(await env.db(), "firm_queue_failed_executions")).toBe(1);
  });

  it("without a retry option a job gets one attempt", async () => {
    const firm = env.firm();
    let runs = 0;
    const job = firm.defineJob("once", async () => {
      runs++;
      throw new FlakyError("no");
    });
    const id = (await job.enqueue(null)).id;
    await firm.drain();
    expect(runs).toBe(1);
    expect(await firm.getJob(id)).toMatchObject({ state: "failed", attempts: 1 });
  });

  it("retryOn decides which errors are retried", async () => {
    const firm = env.firm();
    const runs: Record<string, number> = { flaky: 0, type: 0 };
    const job = firm.defineJob(
      "picky",
      async (args: { kind: "flaky" | "type" }) => {
        runs[args.kind]!++;
        throw args.kind === "flaky" ? new FlakyError("try again") : new TypeError("a bug");
      },
      { retry: { attempts: 3, backoff: 0, retryOn: (error) => error instanceof FlakyError } },
    );
    const flakyId = (await job.enqueue({ kind: "flaky" })).id;
    const typeId = (await job.enqueue({ kind: "type" })).id;
    await firm.drain();
    expect(runs).toEqual({ flaky: 3, type: 1 });
    expect(await firm.getJob(flakyId)).toMatchObject({ state: "failed", attempts: 3 });
    expect(await firm.getJob(typeId)).toMatchObject({ state: "failed", attempts: 1, error: { name: "TypeError" } });
  });

  it("abandonOn abandons the job: recorded as finished with its error kept, never failed", async () => {
    const firm = env.firm({ preserveFinishedJobs: false });
    class Obsolete extends Error {
      override name = "Obsolete";
    }
    let runs = 0;
    const job = firm.defineJob(
      "droppable",
      async () => {
        runs++;
        throw new Obsolete("the order was cancelled");
      },
      { retry: { attempts: 5, backoff: 0, abandonOn: (error) => error instanceof Obsolete } },
    );
    const id = (await job.enqueue(null)).id;
    await firm.drain();
    expect(runs).toBe(1);
    const info = await firm.getJob(id);
    // Kept even with preserveFinishedJobs: false, so the error can be seen; cleanup removes it later.
    expect(info).toMatchObject({
      state: "finished",
      attempts: 1,
      lastError: { name: "Obsolete", message: "the order was cancelled" },
    });
    expect(info?.finishedAt).toBeInstanceOf(Date);
    expect(info?.error).toBeUndefined();
    expect(await countRows(await env.db(), "firm_queue_failed_executions")).toBe(0);
  });

  it("discardOn, the deprecated name of abandonOn, still abandons the job", async () => {
    const firm = env.firm({ preserveFinishedJobs: false });
    class Obsolete extends Error {
      override name = "Obsolete";
    }
    let runs = 0;
    const job = firm.defineJob(
      "droppable-old-name",
      async () => {
        runs++;
        throw new Obsolete("the order was cancelled");
      },
      { retry: { attempts: 5, backoff: 0, discardOn: (error) => error instanceof Obsolete } },
    );
    const id = (await job.enqueue(null)).id;
    await firm.drain();
    expect(runs).toBe(1);
    const info = await firm.getJob(id);
    // Kept even with preserveFinishedJobs: false, so the error can be seen; cleanup removes it later.
    expect(info).toMatchObject({
      state: "finished",
      attempts: 1,
      lastError: { name: "Obsolete", message: "the order was cancelled" },
    });
    expect(info?.finishedAt).toBeInstanceOf(Date);
    expect(info?.error).toBeUndefined();
    expect(await countRows(await env.db(), "firm_queue_failed_executions")).toBe(0);
  });

  it("UnrecoverableError (and subclasses) fail the job at once, attempts left or not", async () => {
    const firm = env.firm();
    class BadInput extends UnrecoverableError {}
    let runs = 0;
    const job = firm.defineJob(
      "hopeless",
      async () => {
        runs++;
        throw new BadInput("customer 42 does not exist");
      },
      { retry: { attempts: 5, backoff: 0 } },
    );
    const id = (await job.enqueue(null)).id;
    await firm.drain();
    expect(runs).toBe(1);
    expect(await firm.getJob(id)).toMatchObject({
      state: "failed",
      attempts: 1,
      error: { name: "BadInput", message: "customer 42 does not exist" },
    });
  });

  it("a retry policy function that throws fails the job instead of retrying it blindly", async () => {
    const firm = env.firm();
    const job = firm.defineJob(
      "bad-policy",
      async () => {
        throw new FlakyError("first");
      },
      {
        retry: {
          attempts: 5,
          retryOn: () => {
            throw new Error("bug in retryOn");
          },
        },
      },
    );
    const id = (await job.enqueue(null)).id;
    await firm.drain();
    // The job's own error is what gets stored, not the policy's.
    expect(await firm.getJob(id)).toMatchObject({
      state: "failed",
      attempts: 1,
      error: { name: "FlakyError", message: "first" },
    });
  });

  it("recordFailedAttempt applies the policy to errors from outside the handler (crash recovery)", async () => {
    const firm = env.firm();
    const job = firm.defineJob("survivor", async () => {}, { retry: { attempts: 2, backoff: 0 } });
    const id = (await job.enqueue(null)).id;
    const database = await firm.database();
    const processId = await registerProcess(database.db, { kind: "Worker", name: "doomed-process" }, new Date());
    await claimJobs(database, new QueueSelector("*"), 1, processId);
    class ProcessExitError extends Error {
      override name = "ProcessExitError";
    }
    const recover = () =>
      database.dialect.beginClaimTx(database.db, async (trx) => {
        expect(await removeClaim(trx, id, processId)).toBe(true);
        return recordFailedAttempt(
          trx,
          id,
          new ProcessExitError("worker 123 was killed by SIGKILL"),
          new Date(),
          dispatchContext(database, (firm as any).policies),
        );
      });
    const first = await recover();
    expect(first.decision).toEqual({ action: "retry", delayMs: 0 });
    expect(await firm.getJob(id)).toMatchObject({
      state: "ready",
      attempts: 1,
      lastError: { name: "ProcessExitError" },
    });
    await claimJobs(database, new QueueSelector("*"), 1, processId);
    const second = await recover();
    expect(second.decision).toMatchObject({ action: "fail", reason: "no attempts left" });
    expect(await firm.getJob(id)).toMatchObject({
      state: "failed",
      attempts: 2,
      error: { name: "ProcessExitError", message: "worker 123 was killed by SIGKILL" },
    });
  });

  it("exponential backoff schedules each retry within its jitter window", async () => {
    const firm = env.firm();
    const job = firm.defineJob(
      "backoff-exp",
      async () => {
        throw new FlakyError("down");
      },
      { retry: { attempts: 4, backoff: "exponential", jitter: 0.5 } },
    );
    const id = (await job.enqueue(null)).id;
    for (const base of [1000, 2000, 4000]) {
      const before = await databaseNow(firm);
      await firm.drain();
      const after = await databaseNow(firm);
      const info = await firm.getJob(id);
      expect(info?.state).toBe("scheduled");
      const at = info!.scheduledAt!.getTime();
      // delay in [base × (1 − jitter), base], counted from the failure, which happened in [before, after].
      expect(at).toBeGreaterThanOrEqual(before + base * 0.5);
      expect(at).toBeLessThanOrEqual(after + base);
      await fastForward(env, firm);
    }
    await firm.drain();
    expect(await firm.getJob(id)).toMatchObject({ state: "failed", attempts: 4 });
  });

  it("polynomial, fixed, function and capped backoffs schedule retries where the formulas say", async () => {
    const firm = env.firm();
    const fail = async () => {
      throw new FlakyError("down");
    };
    const cases: Array<[string, Parameters<typeof firm.defineJob>[2], number[]]> = [
      ["poly", { retry: { attempts: 3, backoff: "polynomial" } }, [3000, 18_000]],
      ["fixed", { retry: { attempts: 3, backoff: "30s" } }, [30_000, 30_000]],
      [
        "function",
        { retry: { attempts: 3, backoff: (attempt, error) => attempt * 1000 + (error as Error).message.length } },
        [1004, 2004],
      ],
      ["capped", { retry: { attempts: 3, backoff: "polynomial", maxDelay: "10s" } }, [3000, 10_000]],
    ];
    const ids = new Map<string, number>();
    for (const [name, options] of cases) ids.set(name, (await firm.defineJob(name, fail, options).enqueue(null)).id!);
    for (const round of [0, 1]) {
      const before = await databaseNow(firm);
      await firm.drain();
      const after = await databaseNow(firm);
      for (const [name, , delays] of cases) {
        const at = (await firm.getJob(ids.get(name)!))!.scheduledAt!.getTime();
        expect(at, `${name} retry ${round + 1}`).toBeGreaterThanOrEqual(before + delays[round]!);
        expect(at, `${name} retry ${round + 1}`).toBeLessThanOrEqual(after + delays[round]!);
      }
      await fastForward(env, firm);
    }
  });
});
