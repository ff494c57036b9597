import { describe, expect, it } from "vitest";
import { JobAbort } from "../src/roles/job-abort.js";

// The worker makes a job's AbortController only when the signal is read: reading it after the
// job was told to stop must still give an aborted signal with the reason, as an eager one would.
describe("JobAbort", () => {
  it("fired before the signal is read: the signal is made already aborted, with the reason", () => {
    const abort = new JobAbort();
    const reason = new Error("stop");
    abort.abort(reason);
    expect(abort.aborted).toBe(true);
    expect(abort.signal.aborted).toBe(true);
    expect(abort.signal.reason).toBe(reason);
  });

  it("fired after the signal is read: its listeners hear it, once, with the first reason", () => {
    const abort = new JobAbort();
    const heard: unknown[] = [];
    abort.signal.addEventListener("abort", () => heard.push(abort.signal.reason));
    const first = new Error("first");
    abort.abort(first);
    abort.abort(new Error("second"));
    expect(heard).toEqual([first]);
    expect(abort.reason).toBe(first);
  });

  it("not fired: not aborted, and the same signal each time", () => {
    const abort = new JobAbort();
    expect(abort.aborted).toBe(false);
    expect(abort.reason).toBeUndefined();
    expect(abort.signal).toBe(abort.signal);
    expect(abort.signal.aborted).toBe(false);
  });

  it("a given signal is the job's signal, fired by its owner only", () => {
    const owner = new AbortController();
    const abort = new JobAbort(owner.signal);
    abort.abort(new Error("ignored"));
    expect(abort.aborted).toBe(false);
    expect(abort.signal).toBe(owner.signal);
    owner.abort("done");
    expect(abort.aborted).toBe(true);
    expect(abort.reason).toBe("done");
  });
});
