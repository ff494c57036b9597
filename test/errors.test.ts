import { describe, expect, it } from "vitest";
import {
  ConfigurationError,
  DatabaseUrlError,
  FirmQueue,
  JobNotFoundError,
  SerializationError,
  UnknownJobError,
  silentLogger,
} from "../src/index.js";
import { decideAfterFailure } from "../src/definitions/retry-decision.js";
import { resolveRetryPolicy } from "../src/definitions/retry-policy.js";
import { describeEachDatabase, enqueued } from "./support/harness.js";

/** The error a promise rejects with, or a failure when it resolves. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.unreachable("expected a rejection"),
    (error: unknown) => error,
  );
}

describe("errors carry the data their messages are built from", () => {
  it("a bad URL names itself, password hidden, with the reason", () => {
    const url = new DatabaseUrlError("postgres://user:secret@host/db", "it names no host");
    expect(url).toMatchObject({ url: "postgres://user:***@host/db", reason: "it names no host" });
    expect(url.message).not.toContain("secret");
  });

  it("bad input is a named error, never a bare TypeError", async () => {
    const firm = new FirmQueue({ databaseUrl: "sqlite::memory:", logger: silentLogger });
    const job = firm.defineJob("typed", async () => {});
    expect(await rejection(job.enqueueAll("not a list" as never))).toBeInstanceOf(ConfigurationError);
    await firm.close();
    const policy = resolveRetryPolicy({ attempts: 3, backoff: (async () => 10) as never }, "test");
    const decision = decideAfterFailure(policy, 1, new Error("x"));
    expect(decision).toMatchObject({ action: "fail", reason: "retry policy threw" });
    expect((decision as { policyError: unknown }).policyError).toBeInstanceOf(ConfigurationError);
  });
});

describeEachDatabase("errors with data", (env) => {
  it("SerializationError names the job and the path; nothing is written", async () => {
    const firm = env.firm();
    const job = firm.defineJob("strict", async () => {});
    const error = await rejection(job.enqueue({ list: [1, Symbol("s")] } as never));
    expect(error).toBeInstanceOf(SerializationError);
    expect(error).toMatchObject({ jobName: "strict", path: "arguments.list[1]" });
  });

  it("JobNotFoundError carries the job id", async () => {
    const firm = env.firm();
    const error = await rejection(firm.failedJobs.retry(987_654));
    expect(error).toBeInstanceOf(JobNotFoundError);
    expect(error).toMatchObject({ jobId: 987_654 });
  });

  it("a job nobody defines fails with UnknownJobError naming it and the known jobs", async () => {
    const producer = env.firm();
    const id = await enqueued(producer.enqueue("nobody-defines-me", {}, { undeclared: true }));
    const worker = env.firm();
    worker.defineJob("something-else", async () => {});
    await worker.drain();
    const job = await producer.getJob(id);
    expect(job?.state).toBe("failed");
    expect(job?.error?.name).toBe(UnknownJobError.name);
    expect(new UnknownJobError("a", ["b"])).toMatchObject({ jobName: "a", known: ["b"] });
  });
});
