import { describe, expect, it } from "vitest";
import { STRAY_CLAIM_CHECK_MS, STRAY_CLAIM_WINDOW_MS, StrayClaimChecks } from "../src/roles/stray-claims.js";

describe("when a worker looks for claims it does not know of", () => {
  const clock = () => {
    let now = 1_000_000;
    return { now: () => now, advance: (ms: number) => void (now += ms) };
  };

  it("never, while its polls do not fail: a sleep is left as it is", () => {
    const time = clock();
    const checks = new StrayClaimChecks(time.now);
    expect(checks.due).toBe(false);
    time.advance(10 * STRAY_CLAIM_WINDOW_MS);
    expect(checks.due).toBe(false);
    expect(checks.cap(30_000)).toBe(30_000);
  });

  it("at the next poll after a failure, then every check interval, until the window after the last failure closes", () => {
    const time = clock();
    const checks = new StrayClaimChecks(time.now);
    checks.claimFailed();
    expect(checks.due).toBe(true);
    checks.checked();
    expect(checks.due).toBe(false);
    // A long sleep (an idle or saturated worker) ends when the next look is due.
    expect(checks.cap(2 ** 31 - 1)).toBe(STRAY_CLAIM_CHECK_MS);
    expect(checks.cap(10)).toBe(10);
    time.advance(STRAY_CLAIM_CHECK_MS);
    expect(checks.due).toBe(true);
    checks.checked();
    // Another failure within the window extends it from then.
    time.advance(STRAY_CLAIM_WINDOW_MS / 2);
    checks.claimFailed();
    time.advance(STRAY_CLAIM_WINDOW_MS - 1);
    expect(checks.due).toBe(true);
    checks.checked();
    time.advance(STRAY_CLAIM_CHECK_MS);
    expect(checks.due).toBe(true);
    // The look made after the window closed is the last one.
    checks.checked();
    time.advance(STRAY_CLAIM_CHECK_MS);
    expect(checks.due).toBe(false);
    expect(checks.cap(30_000)).toBe(30_000);
  });
});
