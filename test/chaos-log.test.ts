import { describe, expect, it } from "vitest";
import { analyseChaosLog, type ChaosPlan } from "./support/chaos-log.js";

/** Violation kinds with their line numbers, for compact assertions. */
const found = (lines: string[], limit: number | ChaosPlan = 1) =>
  analyseChaosLog(lines, limit).violations.map((violation) => `${violation.kind}@${violation.line}`);

/** A flow (parent 9 over children 1 and 2), a batch (7 of jobs 3 and 4, with both callbacks) and a 2-per-second rate. */
const PLAN: ChaosPlan = {
  keyLimit: 1,
  flows: [{ parent: 9, children: [1, 2] }],
  batches: [{ id: 7, members: [3, 4], callbacks: ["on-finish", "on-success"] }],
  rate: { limit: 2, periodMs: 1000 },
};
/** The batch's jobs and both its callbacks, run cleanly: every rule of PLAN but the flow's is met. */
const BATCH_DONE = [
  "start 3 10 - 1",
  "end 3 10 -",
  "start 4 11 - 1",
  "end 4 11 -",
  "start 20 10 - 1 callback=7:on-finish",
  "end 20 10 -",
  "start 21 11 - 1 callback=7:on-success",
  "end 21 11 -",
];
/** The flow's children and parent, run cleanly. */
const FLOW_DONE = ["start 1 10 - 1", "start 2 11 k 1", "end 2 11 k", "end 1 10 -", "start 9 11 - 1", "end 9 11 -"];

// The chaos suite's verdicts come from this analysis; these cases show each rule can fail.
describe("chaos log analysis (test support)", () => {
  it("a clean run: every job starts and ends once, in several processes", () => {
    const report = analyseChaosLog(
      [
        "ready 10 Worker 1",
        "ready 11 Worker 1",
        "start 1 10 - 1",
        "start 2 11 k 1",
        "end 2 11 k",
        "end 1 10 -",
        "exit 10 0",
        "exit 11 0",
      ],
      1,
    );
    expect(report.violations).toEqual([]);
    expect([...report.succeeded]).toEqual([2, 1]);
    expect(report.counts).toMatchObject({ starts: 2, ends: 2, reruns: 0, exits: 2 });
  });

  it("a job may run again after its process was killed mid-run, after a failure and after an abort", () => {
    expect(
      found([
        "start 1 10 - 1",
        "kill 10 worker",
        "start 1 11 - 2",
        "fail 1 11 -",
        "start 1 11 - 3",
        "abort 1 11 -",
        "start 1 12 - 3",
        "end 1 12 -",
      ]),
    ).toEqual([]);
  });

  it("a second run while the first one's process is alive is a violation", () => {
    expect(found(["start 1 10 - 1", "start 1 11 - 1", "end 1 11 -"])).toEqual(["rerun-while-running@2"]);
    // The same process claiming a job it is still running counts too.
    expect(found(["start 1 10 - 1", "start 1 10 - 1"])).toEqual(["rerun-while-running@2"]);
  });

  it("a job that succeeded runs again only if its process was killed (or crashed) before the outcome was written", () => {
    expect(found(["start 1 10 - 1", "end 1 10 -", "start 1 11 - 1"])).toEqual(["rerun-after-success@3"]);
    // A graceful exit after success is no excuse: the outcome must have been written first.
    expect(found(["start 1 10 - 1", "end 1 10 -", "exit 10 0", "start 1 11 - 1"])).toEqual(["rerun-after-success@4"]);
    expect(found(["start 1 10 - 1", "end 1 10 -", "kill 10 worker", "start 1 11 - 1"])).toEqual([]);
    expect(found(["start 1 10 - 1", "end 1 10 -", "exit 10 1", "start 1 11 - 1"])).toEqual([]);
  });

  it("runs of one key beyond the limit are a violation; an ended, failed or killed run frees the key", () => {
    expect(found(["start 1 10 k 1", "start 2 11 k 1"])).toEqual(["over-limit@2"]);
    expect(found(["start 1 10 k 1", "start 2 11 k 1", "start 3 12 k 1"], 2)).toEqual(["over-limit@3"]);
    expect(
      found([
        "start 1 10 k 1",
        "start 2 11 j 1",
        "end 1 10 k",
        "start 3 11 k 1",
        "fail 3 11 k",
        "start 4 12 k 1",
        "kill 12 worker",
        "start 5 13 k 1",
      ]),
    ).toEqual([]);
  });

  it("a start logged between a SIGKILL and its `kill` line breaks nothing if the killed process never wrote again", () => {
    // Condensed from a real SQLite run (seed 1699934065): worker 30 was SIGKILLed running a k7
    // job; its supervisor recovered the claims and worker 31 started k7's next job before the
    // test, held up between the signal and its write, logged the kill.
    const run = [
      "ready 30 Worker 1",
      "ready 31 Worker 1",
      "start 1756 30 k7 1",
      "killing 30 worker",
      "start 1792 31 k7 1",
      "kill 30 worker",
      "end 1792 31 k7",
      "start 1756 31 k7 2",
      "end 1756 31 k7",
    ];
    expect(found(run)).toEqual([]);
    expect(analyseChaosLog(run, 1).counts.kills).toBe(1);
    // The same in a window that also reruns a job the killed process ran or had finished.
    expect(found(["start 1 30 - 1", "killing 30 worker", "start 1 31 - 2", "kill 30 worker"])).toEqual([]);
    expect(found(["start 1 30 - 1", "end 1 30 -", "killing 30 worker", "start 1 31 - 2", "kill 30 worker"])).toEqual(
      [],
    );
  });

  it("a process seen alive after a start in its kill window was still running its job: a violation at the start", () => {
    // It wrote the end of its run afterwards: both ran at once.
    expect(
      found(["start 1 30 k 1", "killing 30 worker", "start 2 31 k 1", "end 1 30 k", "kill 30 worker", "end 2 31 k"]),
    ).toEqual(["over-limit@3"]);
    // Any line of it counts, and the verdict keeps its place among the others.
    expect(
      found([
        "start 1 30 - 1",
        "killing 30 worker",
        "start 1 31 - 2",
        "start 7 32 k 1",
        "start 8 33 k 1",
        "start 2 30 - 1",
        "kill 30 worker",
      ]),
    ).toEqual(["rerun-while-running@3", "over-limit@5"]);
    expect(
      found([
        "start 1 30 - 1",
        "end 1 30 -",
        "killing 30 worker",
        "start 1 31 - 2",
        "ready 30 Worker 1",
        "kill 30 worker",
      ]),
    ).toEqual(["rerun-after-success@4"]);
    // A start before the `killing` line is judged at once: no signal had been sent yet.
    expect(found(["start 1 30 k 1", "start 2 31 k 1", "killing 30 worker", "kill 30 worker"])).toEqual([
      "over-limit@2",
    ]);
    // The starting process being killed proves nothing for a run of another process that is not.
    expect(found(["start 1 30 k 1", "killing 31 worker", "start 2 31 k 1", "kill 31 worker"])).toEqual([
      "over-limit@3",
    ]);
    // Nor does a kill window excuse a start in the very process being killed: it was alive to write it.
    expect(found(["start 1 30 k 1", "killing 30 worker", "start 2 30 k 1", "kill 30 worker"])).toEqual([
      "over-limit@3",
    ]);
  });

  it("a registered process that exits non-zero without being killed crashed; one that never registered did not", () => {
    expect(found(["ready 10 Worker 1", "exit 10 1", "exit 11 1"])).toEqual(["crash@2"]);
    // The uncaught error that ended it, when the process could say, is part of the report.
    const [crash] = analyseChaosLog(
      ["fault stall begins", "ready 10 Worker 1", 'uncaught 10 "Error: Connection terminated"', "exit 10 7"],
      1,
    ).violations;
    expect(crash).toMatchObject({ kind: "crash", line: 4 });
    expect(crash!.detail).toContain('code 7 without being killed: "Error: Connection terminated"');
  });

  it("a process id used again after its process died starts with a clean slate", () => {
    // Job 1 ran in the first process 10, which was killed; a new process 10 runs it again.
    expect(
      found([
        "start 1 10 - 1",
        "kill 10 worker",
        "start 1 10 - 2",
        "end 1 10 -",
        "kill 10 worker",
        "start 2 10 k 1",
        "end 2 10 k",
      ]),
    ).toEqual([]);
    // The later kill of the new process 10 does not excuse a rerun of a job the old one finished.
    expect(found(["start 1 10 - 1", "end 1 10 -", "exit 10 0", "kill 10 worker", "start 1 11 - 1"])).toEqual([
      "rerun-after-success@5",
    ]);
  });

  it("events that match no run are reported", () => {
    expect(found(["end 1 10 -", "start 2 10 - 1", "end 2 11 -", "bogus"])).toEqual([
      "unmatched@1",
      "unmatched@3",
      "unmatched@4",
    ]);
  });

  it("a flow's parent and a batch's callbacks start after every job they wait for has ended, each callback as one job", () => {
    const report = analyseChaosLog([...FLOW_DONE, ...BATCH_DONE], PLAN);
    expect(report.violations).toEqual([]);
    expect(report.counts).toMatchObject({ callbacks: 2, rateStarts: 0 });
    expect([...report.callbacks.get(7)!.get("on-finish")!]).toEqual([20]);
    // A child that failed, or whose process was killed, and then ended in a later run is done.
    expect(
      found(
        [
          "start 1 10 - 1",
          "fail 1 10 -",
          "start 2 11 - 1",
          "kill 11 worker",
          "start 1 12 - 2",
          "end 1 12 -",
          "start 2 12 - 2",
          "end 2 12 -",
          "start 9 12 - 1",
          "end 9 12 -",
          ...BATCH_DONE,
        ],
        PLAN,
      ),
    ).toEqual([]);
    // A parent run again after its process was killed is not an early start.
    expect(found([...FLOW_DONE, "kill 11 worker", "start 9 12 - 1", "end 9 12 -", ...BATCH_DONE], PLAN)).toEqual([]);
  });

  it("a parent that starts before a child ended, or while a child runs, never ran or failed last, is a violation", () => {
    // Child 1 still running.
    expect(found(["start 1 10 - 1", "start 2 11 - 1", "end 2 11 -", "start 9 12 - 1", ...BATCH_DONE], PLAN)).toEqual([
      "dependent-early@4",
    ]);
    // Child 2 never ran.
    expect(found(["start 1 10 - 1", "end 1 10 -", "start 9 12 - 1", ...BATCH_DONE], PLAN)).toEqual([
      "dependent-early@3",
    ]);
    // Child 1's last run failed (its retry is still to come), or its process died running it.
    expect(
      found(["start 1 10 - 1", "fail 1 10 -", "start 2 11 - 1", "end 2 11 -", "start 9 12 - 1", ...BATCH_DONE], PLAN),
    ).toEqual(["dependent-early@5"]);
    expect(
      found(
        ["start 1 10 - 1", "kill 10 worker", "start 2 11 - 1", "end 2 11 -", "start 9 12 - 1", ...BATCH_DONE],
        PLAN,
      ),
    ).toEqual(["dependent-early@5"]);
  });

  it("a child that starts again after its parent started was not finished when the parent started: a violation", () => {
    // Child 1 ended, then its process was killed before the end was recorded: it runs again, after the parent.
    expect(
      found([...FLOW_DONE.slice(0, 4), "kill 10 worker", "start 9 11 - 1", "start 1 12 - 2", ...BATCH_DONE], PLAN),
    ).toEqual(["dependent-early@7"]);
  });

  it("a batch's callback started before the batch's jobs ended, twice as two jobs, or never, is a violation", () => {
    // The onFinish callback starts while job 4 runs.
    expect(
      found(
        [
          ...FLOW_DONE,
          "start 3 10 - 1",
          "end 3 10 -",
          "start 4 11 - 1",
          "start 20 10 - 1 callback=7:on-finish",
          "end 4 11 -",
          "end 20 10 -",
          "start 21 11 - 1 callback=7:on-success",
        ],
        PLAN,
      ),
    ).toEqual(["dependent-early@10"]);
    // Enqueued twice: a second job of the same callback.
    expect(found([...FLOW_DONE, ...BATCH_DONE, "start 22 12 - 1 callback=7:on-finish", "end 22 12 -"], PLAN)).toEqual([
      "callback-count@15",
    ]);
    // The same callback job run again (its process killed) is one job: no violation.
    expect(
      found([...FLOW_DONE, ...BATCH_DONE, "kill 11 worker", "start 21 12 - 2 callback=7:on-success"], PLAN),
    ).toEqual([]);
    // Never run: reported at the end of the log.
    expect(found([...FLOW_DONE, ...BATCH_DONE.slice(0, 6)], PLAN)).toEqual(["callback-count@12"]);
    // A callback the batch does not have, or of a batch that does not exist.
    expect(found([...FLOW_DONE, ...BATCH_DONE, "start 23 12 - 1 callback=8:on-finish"], PLAN)).toEqual([
      "callback-count@15",
    ]);
    expect(found([...FLOW_DONE, ...BATCH_DONE, "start 24 12 - 1 callback=7:on-failure"], PLAN)).toEqual([
      "callback-count@15",
    ]);
  });

  it("more than the limit of one budget's starts in a period, on the claims' recorded times, is a violation", () => {
    const rated = (...starts: string[]) => found([...FLOW_DONE, ...BATCH_DONE, ...starts], PLAN);
    // 2 per 1000 ms: the third start exactly 1000 ms after the first is allowed (the window is (t − 1000, t]),
    // whatever the order the lines were written in; other budgets have windows of their own.
    expect(
      rated(
        "start 30 10 - 1 budget=r0@5000",
        "start 32 11 - 1 budget=r0@6000",
        "start 31 12 - 1 budget=r0@5400",
        "start 40 12 - 1 budget=r1@5100",
        "start 41 12 - 1 budget=r1@5200",
        "start 33 11 - 1 budget=r0@6400",
      ),
    ).toEqual([]);
    expect(
      analyseChaosLog(
        [...FLOW_DONE, ...BATCH_DONE, "start 30 10 - 1 budget=r0@5000/4990", "start 31 10 - 1 budget=r1@5000/5020"],
        PLAN,
      ).counts,
    ).toMatchObject({ rateStarts: 2, claimAheadMs: 10 });
    // One ms less is over: the third start (by time) is reported, at its line.
    expect(
      rated("start 30 10 - 1 budget=r0@5000", "start 32 11 - 1 budget=r0@5999", "start 31 12 - 1 budget=r0@5400"),
    ).toEqual(["rate-window@16"]);
    // Starts of a killed process count like any other, and so do a job's reruns.
    expect(
      rated(
        "start 30 10 - 1 budget=r0@5000",
        "kill 10 worker",
        "start 30 11 - 2 budget=r0@5500",
        "start 31 11 - 1 budget=r0@5900",
      ),
    ).toEqual(["rate-window@18"]);
    // A start without the time its claim recorded cannot be checked: reported.
    expect(rated("start 30 10 - 1 budget=r0@NaN")).toEqual(["rate-window@15"]);
  });
});
