import { describe, expect, it } from "vitest";
import { ConfigurationError, type Duration, FirmQueue, UnrecoverableError, silentLogger } from "../src/index.js";
import { DeserializationError } from "../src/errors.js";
import { decideAfterFailure, retryDelay } from "../src/definitions/retry-decision.js";
import { resolveRetryPolicy, type RetryOptions } from "../src/definitions/retry-policy.js";

const policy = (options: RetryOptions) => resolveRetryPolicy(options, "test");
const lowest = () => 0;
const highest = () => 0.999_999;

describe("backoff formulas", () => {
  it("exponential: 1 s × 2^(n−1)", () => {
    const exponential = policy({ attempts: 10, backoff: "exponential" });
    expect([1, 2, 3, 4, 5].map((n) => retryDelay(exponential, n, null))).toEqual([1000, 2000, 4000, 8000, 16_000]);
  });

  it("polynomial: (n⁴ + 2) s", () => {
    const polynomial = policy({ attempts: 10, backoff: "polynomial" });
    expect([1, 2, 3, 4].map((n) => retryDelay(polynomial, n, null))).toEqual([3000, 18_000, 83_000, 258_000]);
  });

  it("fixed and function backoffs, in ms or duration strings", () => {
    expect(retryDelay(policy({ backoff: 250 }), 3, null)).toBe(250);
    expect(retryDelay(policy({ backoff: "2m" }), 3, null)).toBe(120_000);
    expect(retryDelay(policy({ backoff: (n) => `${n}s` as Duration }), 3, null)).toBe(3000);
  });

  it("caps at maxDelay (default 1 day), even for huge attempt numbers", () => {
    expect(retryDelay(policy({ backoff: "exponential" }), 200, null)).toBe(86_400_000);
    expect(retryDelay(policy({ backoff: "polynomial", maxDelay: "1m" }), 5, null)).toBe(60_000);
    expect(retryDelay(policy({ backoff: () => "2d", maxDelay: "1h" }), 1, null)).toBe(3_600_000);
  });

  it("jitter shortens the delay by up to that fraction, never lengthens it", () => {
    const jittery = policy({ backoff: "10s", jitter: 0.2 });
    expect(retryDelay(jittery, 1, null, lowest)).toBe(10_000);
    expect(retryDelay(jittery, 1, null, highest)).toBe(8000);
    for (let i = 0; i < 200; i++) {
      const delay = retryDelay(jittery, 1, null);
      expect(delay).toBeGreaterThanOrEqual(8000);
      expect(delay).toBeLessThanOrEqual(10_000);
    }
    // Jitter applies after the cap, so jobs at the cap still spread out.
    expect(retryDelay(policy({ backoff: "exponential", maxDelay: "1m", jitter: 0.5 }), 30, null, highest)).toBe(30_000);
  });
});

describe("retry decisions", () => {
  const retrying = policy({
    attempts: 3,
    backoff: 0,
    retryOn: (e) => !(e instanceof RangeError),
    abandonOn: (e) => e instanceof SyntaxError,
  });

  it("retries while attempts are left, then fails", () => {
    expect(decideAfterFailure(retrying, 1, new Error("x"))).toEqual({ action: "retry", delayMs: 0 });
    expect(decideAfterFailure(retrying, 2, new Error("x"))).toEqual({ action: "retry", delayMs: 0 });
    expect(decideAfterFailure(retrying, 3, new Error("x"))).toEqual({ action: "fail", reason: "no attempts left" });
  });

  it("abandonOn wins over everything; unrecoverable errors and retryOn stop retries", () => {
    expect(decideAfterFailure(retrying, 3, new SyntaxError("x"))).toEqual({ action: "abandon" });
    expect(decideAfterFailure(retrying, 1, new UnrecoverableError("x"))).toMatchObject({
      action: "fail",
      reason: "unrecoverable",
    });
    expect(decideAfterFailure(retrying, 1, new DeserializationError("x"))).toMatchObject({
      action: "fail",
      reason: "unrecoverable",
    });
    expect(decideAfterFailure(retrying, 1, new RangeError("x"))).toMatchObject({
      action: "fail",
      reason: "retryOn declined",
    });
  });

  it("recognizes an UnrecoverableError from another copy of the package by its brand", () => {
    const foreign = Object.assign(new Error("x"), { [Symbol.for("firm-queue.unrecoverable")]: true });
    expect(decideAfterFailure(retrying, 1, foreign)).toMatchObject({ action: "fail", reason: "unrecoverable" });
  });

  it("a policy function that throws or answers with a Promise fails the job, reporting why", () => {
    const broken = policy({ attempts: 3, backoff: () => "soon" as never });
    const decision = decideAfterFailure(broken, 1, new Error("x"));
    expect(decision).toMatchObject({ action: "fail", reason: "retry policy threw" });
    expect(String((decision as { policyError: unknown }).policyError)).toContain(
      "the delay returned by retry.backoff must be",
    );
    const asyncRetryOn = policy({ attempts: 3, retryOn: (async () => true) as never });
    expect(decideAfterFailure(asyncRetryOn, 1, new Error("x"))).toMatchObject({
      action: "fail",
      reason: "retry policy threw",
    });
  });
});

describe("retry and timeout options are checked at defineJob", () => {
  const firm = new FirmQueue({ databaseUrl: "sqlite::memory:", logger: silentLogger });
  const define = (options: object) => () => firm.defineJob(`job-${Math.random()}`, async () => {}, options as never);

  it.each([
    [{ retry: { attempts: 3, tries: 2 } }, 'retry option "tries"'],
    [{ retry: { attempts: 0 } }, "retry.attempts must be a whole number of at least 1"],
    [{ retry: { attempts: 2.5 } }, "retry.attempts must be"],
    [{ retry: { jitter: 1.5 } }, "retry.jitter must be a fraction from 0 to 1"],
    [{ retry: { jitter: "10%" } }, "retry.jitter must be"],
    [{ retry: { backoff: "linear" } }, 'retry.backoff must be "exponential", "polynomial", a duration'],
    [{ retry: { backoff: -5 } }, "retry.backoff must be"],
    [{ retry: { backoff: "2d" } }, "retry.backoff (172800000 ms) is longer than retry.maxDelay"],
    [{ retry: { maxDelay: "forever" } }, "retry.maxDelay must be"],
    [{ retry: { retryOn: true } }, "retry.retryOn must be a function"],
    [{ retry: { discardOn: "SyntaxError" } }, "retry.discardOn must be a function"],
    [{ retry: { abandonOn: "SyntaxError" } }, "retry.abandonOn must be a function"],
    [{ retry: { abandonOn: () => true, discardOn: () => true } }, "retry.discardOn is the old name of retry.abandonOn"],
    [{ retry: 3 }, "retry options must be an object"],
    [{ timeout: 0 }, "option timeout must be from 1 ms"],
    [{ timeout: "30 seconds" }, "option timeout must be milliseconds"],
    [{ timeout: "30d" }, "option timeout must be from 1 ms to about 24 days"],
  ])("%j is refused: %s", (options, message) => {
    expect(define(options)).toThrow(ConfigurationError);
    expect(define(options)).toThrow(message);
  });

  it("fills in defaults", () => {
    const job = firm.defineJob("defaults", async () => {}, { retry: { attempts: 4 }, timeout: "2s" });
    expect(job.options.retry).toMatchObject({
      attempts: 4,
      backoff: "exponential",
      jitter: 0,
      maxDelay: 86_400_000,
      retryOn: null,
      abandonOn: null,
    });
    expect(job.options.timeout).toBe(2000);
    const plain = firm.defineJob("plain", async () => {});
    expect(plain.options.retry.attempts).toBe(1);
    expect(plain.options.timeout).toBeNull();
  });
});
