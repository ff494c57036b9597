import { describe, expect, it } from "vitest";
import { Backoff } from "../src/backoff.js";

describe("Backoff", () => {
  it("grows exponentially with jitter and never passes its cap", () => {
    const backoff = new Backoff(100, 2000);
    const delays = Array.from({ length: 12 }, () => backoff.next());
    expect(backoff.count).toBe(12);
    for (const [index, delay] of delays.entries()) {
      expect(delay).toBeGreaterThanOrEqual(50);
      expect(delay).toBeLessThanOrEqual(Math.min(2000, 100 * 2 ** index));
    }
    backoff.reset();
    expect(backoff.count).toBe(0);
    expect(backoff.next()).toBeLessThanOrEqual(100);
  });
});
