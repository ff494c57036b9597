import { describe, expect, it } from "vitest";
import type { QueueSnapshot } from "../src/cli/queue-snapshot.js";
import { renderTopFrame } from "../src/cli/top-screen.js";

const at = new Date("2026-12-04T01:00:00Z");
const snapshot: QueueSnapshot = {
  at,
  queues: [
    {
      name: "mail",
      ready: 40,
      scheduled: 2,
      blocked: 1,
      throttled: 0,
      claimed: 3,
      failed: 1,
      latency: 1500,
      paused: false,
    },
  ],
  totals: { ready: 40, scheduled: 2, blocked: 1, running: 3, failed: 1, backlog: 43, latency: 1500 },
  rates: {
    perSecond: { finished: 12.5, failed: 0.1 },
    lastMinute: { finished: 700, failed: 6, finishedPerMinute: 700, failedPerMinute: 6 },
    last5Minutes: { finished: 3500, failed: 30, finishedPerMinute: 700, failedPerMinute: 6 },
    lastHour: { finished: 42_000, failed: 360, finishedPerMinute: 700, failedPerMinute: 6 },
    perQueue: [
      { queue: "mail", enqueuedPerSecond: 14, enqueuedExact: true, finishedPerSecond: 12.3, failedPerSecond: 0.1 },
      // A queue whose jobs all ended in the window: it has rates but no unfinished jobs.
      { queue: "drained", enqueuedPerSecond: 2.5, enqueuedExact: false, finishedPerSecond: 0.2, failedPerSecond: 0 },
    ],
  },
  recentFailures: [],
  processes: [],
};

describe("top's frame", () => {
  it("shows the figures, and is cut to the terminal's width and height so it never scrolls", () => {
    const full = renderTopFrame(snapshot, { width: 200, height: 100 }, 1000);
    expect(full[0]).toBe("firm-queue top  2026-12-04T01:00:00Z  every 1 s  (q or Ctrl-C quits)");
    expect(full.join("\n")).toMatch(
      /QUEUE\s+BACKLOG\s+READY\s+SCHEDULED\s+BLOCKED\s+RUNNING\s+FAILED\s+LATENCY\s+ENQ\/S\s+DONE\/S\s+FAIL\/S\s+STATUS/,
    );
    expect(full.join("\n")).toMatch(/mail\s+43\s+40\s+2\s+1\s+3\s+1\s+2 s\s+14\.0\s+12\.3\s+0\.1\s+active/);
    // Rows are sorted by name; a count read up to its bound is shown as a lower bound.
    expect(full.join("\n")).toMatch(/drained\s+0\s+0\s+0\s+0\s+0\s+0\s+-\s+≥2\.5\s+0\.2\s+0\s+active\n\s*mail/);
    expect(full.join("\n")).toContain(
      "finished 12.5/s  failed 0.1/s (last 10 s)   finished 42,000  failed 360 (last hour)",
    );
    const small = renderTopFrame(snapshot, { width: 30, height: 5 }, 1000);
    expect(small).toHaveLength(5);
    for (const line of small) expect(line.length).toBeLessThanOrEqual(30);
  });

  it("keeps the last figures under the reason when a refresh fails", () => {
    const lines = renderTopFrame(snapshot, { width: 200, height: 100 }, 1000, "connect ECONNREFUSED");
    expect(lines[1]).toBe("refresh failed: connect ECONNREFUSED");
    expect(lines.join("\n")).toContain("mail");
  });
});
