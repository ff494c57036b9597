import { toMilliseconds } from "../duration.js";
import { ConfigurationError, DeserializationError, isUnrecoverable } from "../errors.js";
import type { RetryPolicy } from "./retry-policy.js";

/** What happens to a job after a failed attempt. */
export type FailureDecision =
  | { readonly action: "retry"; readonly delayMs: number }
  | { readonly action: "fail"; readonly reason: FailReason; readonly policyError?: unknown }
  | { readonly action: "abandon" };

/** Why a failed attempt was not retried. */
export type FailReason = "no attempts left" | "unrecoverable" | "retryOn declined" | "retry policy threw";

/**
 * Decide the fate of a job whose attempt number `attempt` (1 for the first) just failed with
 * `error`. The rules, in order: `abandonOn` matching abandons the job; an unrecoverable error (or
 * arguments that cannot be read) fails it; so does having used every attempt, or `retryOn`
 * declining. Otherwise it is retried after the backoff delay. A policy function that throws or
 * answers nonsense fails the job rather than retry it blindly; the problem is returned to log.
 */
export function decideAfterFailure(
  policy: RetryPolicy,
  attempt: number,
  error: unknown,
  random: () => number = Math.random,
): FailureDecision {
  try {
    if (policy.abandonOn && answer(policy.abandonOn(error), "retry.abandonOn")) return { action: "abandon" };
    if (isUnrecoverable(error) || error instanceof DeserializationError)
      return { action: "fail", reason: "unrecoverable" };
    if (attempt >= policy.attempts) return { action: "fail", reason: "no attempts left" };
    if (policy.retryOn && !answer(policy.retryOn(error), "retry.retryOn"))
      return { action: "fail", reason: "retryOn declined" };
    return { action: "retry", delayMs: retryDelay(policy, attempt, error, random) };
  } catch (policyError) {
    return { action: "fail", reason: "retry policy threw", policyError };
  }
}

/**
 * The delay before the retry that follows failed attempt `attempt`: the backoff formula, capped
 * at `maxDelay`, then shortened by up to `jitter` of itself. So it always lies in
 * [capped × (1 − jitter), capped].
 */
export function retryDelay(
  policy: RetryPolicy,
  attempt: number,
  error: unknown,
  random: () => number = Math.random,
): number {
  const capped = Math.min(baseDelay(policy, attempt, error), policy.maxDelay);
  return Math.round(capped * (1 - policy.jitter * random()));
}

function baseDelay(policy: RetryPolicy, attempt: number, error: unknown): number {
  const { backoff } = policy;
  if (typeof backoff === "number") return backoff;
  if (backoff === "exponential") return 1000 * 2 ** (attempt - 1);
  if (backoff === "polynomial") return (attempt ** 4 + 2) * 1000;
  const result: unknown = backoff(attempt, error);
  if (isThenable(result))
    throw new ConfigurationError("retry.backoff returned a Promise; it must return a delay synchronously");
  return toMilliseconds(result as number | string, "the delay returned by retry.backoff");
}

function answer(result: unknown, what: string): boolean {
  if (isThenable(result)) throw new ConfigurationError(`${what} returned a Promise; it must answer synchronously`);
  return Boolean(result);
}

function isThenable(value: unknown): boolean {
  return typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";
}
