import { describe, expectTypeOf, it } from "vitest";
import { type EnqueueOptions, FirmQueue, type JobEnqueueOptions } from "../src/index.js";

// Type-only: checked by vitest's typecheck (see vitest.config.ts), never run.
const firm = new FirmQueue({ databaseUrl: "sqlite::memory:" });

describe("enqueue options", () => {
  it("a key may be a string or a number", () => {
    expectTypeOf<JobEnqueueOptions["key"]>().toEqualTypeOf<string | number | undefined>();
    const job = firm.declareJob<{ day: string }>("report");
    void job.enqueue({ day: "2026-12-01" }, { key: 20261201 });
    void job.enqueueAll([{ day: "2026-12-01" }], { each: [{ key: 1 }] });
    const options: EnqueueOptions = { key: 7 };
    void options;
    // @ts-expect-error a key is no boolean
    void job.enqueue({ day: "2026-12-01" }, { key: true });
  });
});
