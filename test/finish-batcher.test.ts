import { describe, expect, it } from "vitest";
import type { ClaimedJob } from "../src/database/claimed-job.js";
import { FinishBatcher } from "../src/roles/finish-batcher.js";

/** A claimed job as far as the batcher looks at it. */
const job = (id: number) => ({ id }) as unknown as ClaimedJob;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The batcher's writes: each call's finished ids and marks, answered when told to. */
class Writes {
  readonly calls: { finished: number[]; marks: number[] }[] = [];
  private answers: ((error?: unknown) => void)[] = [];

  readonly record = (jobs: readonly ClaimedJob[], marks: readonly number[]) => {
    const finished = jobs.map((entry) => Number(entry.id));
    this.calls.push({ finished, marks: [...marks] });
    return new Promise<Set<number>>((resolve, reject) =>
      this.answers.push((error) => (error === undefined ? resolve(new Set(finished)) : reject(error))),
    );
  };

  /** Answer the oldest write not yet answered (an error makes it fail), and let the next batch start. */
  async answer(error?: unknown): Promise<void> {
    this.answers.shift()!(error);
    // The answer's turn ends, then the next batch begins in the turn after.
    await nextTurn();
    await nextTurn();
  }
}

describe("the finish batcher's start marks", () => {
  it("go in the same write as the finishes of their turn, and nobody waits for them", async () => {
    const writes = new Writes();
    const batcher = new FinishBatcher(writes.record);
    const finished = batcher.finish(job(1));
    batcher.started(2);
    batcher.started(3);
    await nextTurn();
    expect(writes.calls).toEqual([{ finished: [1], marks: [2, 3] }]);
    await writes.answer();
    expect(await finished).toBe(true);
  });

  it("are written alone when their turn has no finish", async () => {
    const writes = new Writes();
    const batcher = new FinishBatcher(writes.record);
    batcher.started(7);
    await nextTurn();
    expect(writes.calls).toEqual([{ finished: [], marks: [7] }]);
    await writes.answer();
  });

  it("that come while a batch is written go with the next one", async () => {
    const writes = new Writes();
    const batcher = new FinishBatcher(writes.record);
    void batcher.finish(job(1));
    await nextTurn();
    batcher.started(2);
    void batcher.finish(job(3));
    await writes.answer();
    expect(writes.calls).toEqual([
      { finished: [1], marks: [] },
      { finished: [3], marks: [2] },
    ]);
    await writes.answer();
    // A mark alone that comes during a write is written after it too.
    void batcher.finish(job(4));
    await nextTurn();
    batcher.started(5);
    await writes.answer();
    expect(writes.calls.at(-1)).toEqual({ finished: [], marks: [5] });
    await writes.answer();
  });

  it("are not written for jobs whose own finish waits for a later batch: that batch removes their claims", async () => {
    const writes = new Writes();
    const batcher = new FinishBatcher(writes.record);
    // More jobs end in one turn than a batch holds (500): each started from the buffer, then ended.
    const ended = Array.from({ length: 600 }, (_, i) => i + 1);
    for (const id of ended) {
      batcher.started(id);
      void batcher.finish(job(id));
    }
    batcher.started(1_000);
    await nextTurn();
    expect(writes.calls).toEqual([{ finished: ended.slice(0, 500), marks: [1_000] }]);
    await writes.answer();
    expect(writes.calls[1]).toEqual({ finished: ended.slice(500), marks: [] });
    await writes.answer();
    expect(writes.calls).toHaveLength(2);
  });

  it("of a failed batch are kept for the next one, without a write of their own, and told once", async () => {
    const writes = new Writes();
    const told: number[][] = [];
    const batcher = new FinishBatcher(writes.record, (jobIds) => told.push([...jobIds]));
    const lost = batcher.finish(job(1)).then(
      () => "recorded",
      (error: Error) => error.message,
    );
    batcher.started(2);
    await nextTurn();
    await writes.answer(new Error("database away"));
    expect(await lost).toBe("database away");
    await nextTurn();
    expect(writes.calls).toHaveLength(1);
    // The retried finish of job 1 carries the mark; a mark never meets its own job's finish.
    batcher.started(1);
    const retried = batcher.finish(job(1)).catch(() => "failed again");
    await nextTurn();
    expect(writes.calls[1]).toEqual({ finished: [1], marks: [2] });
    await writes.answer(new Error("still away"));
    expect(await retried).toBe("failed again");
    expect(told).toEqual([[2]]);
    // Job 1's claim was not removed (that batch failed): its mark is kept too.
    void batcher.finish(job(9));
    await nextTurn();
    expect(writes.calls[2]).toEqual({ finished: [9], marks: [2, 1] });
    await writes.answer();
    batcher.started(4);
    await nextTurn();
    await writes.answer(new Error("away again"));
    expect(told).toEqual([[2], [4]]);
  });
});

describe("the finish batcher's turns", () => {
  it("write one batch per turn, so timers run while a synchronous database keeps answering", async () => {
    // A database that answers at once (SQLite's calls are synchronous), and a worker whose slots
    // free when a handler ends, before its write: while each write is under way, a buffered job
    // starts and ends, so there is always one more finish waiting when a write returns.
    let left = 1_000;
    const batcher: FinishBatcher = new FinishBatcher(async (jobs) => {
      if (left > 0) void batcher.finish(job(left--));
      return new Set(jobs.map((entry) => Number(entry.id)));
    });
    let leftWhenTimerRan: number | undefined;
    setTimeout(() => (leftWhenTimerRan = left), 0);
    void batcher.finish(job(0));
    while (left > 0) await nextTurn();
    // Batches written one after another within a turn would have taken all 1,000 before the timer ran.
    expect(leftWhenTimerRan).toBeGreaterThan(900);
  });
});
