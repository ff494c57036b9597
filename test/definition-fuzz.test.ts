import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { FirmQueue, silentLogger } from "../src/index.js";
import {
  anyValue,
  FUZZ_CASE_TIMEOUT_MS,
  hostileNumber,
  hostileOptions,
  hostileText,
  materialize,
  optionValue,
  outcome,
  show,
} from "./support/fuzz-inputs.js";
import { fuzzParameters } from "./support/hostile-requests.js";

/** Every option of defineJob and declareJob, with plausible or hostile values. */
const jobOptions = hostileOptions({
  queue: optionValue(fc.constantFrom("default", "mail")),
  priority: optionValue(fc.integer({ min: -5, max: 5 })),
  timeout: optionValue(fc.oneof(fc.constantFrom("5s", "1m"), hostileNumber)),
  retry: optionValue(
    hostileOptions({
      attempts: optionValue(fc.integer({ min: 1, max: 5 })),
      backoff: optionValue(fc.constantFrom("exponential", "polynomial", "10s", 100)),
      jitter: optionValue(fc.double({ min: 0, max: 1, noNaN: true })),
      maxDelay: optionValue(fc.constantFrom("1h", 1000)),
    }),
  ),
  concurrency: optionValue(
    hostileOptions({
      key: optionValue(
        fc.oneof(
          hostileText,
          fc.constant((args: unknown) => String(args)),
        ),
      ),
      to: optionValue(fc.integer({ min: 1, max: 3 })),
      duration: optionValue(fc.constantFrom("1m", 60_000)),
      group: optionValue(hostileText),
      onConflict: optionValue(fc.constantFrom("block", "drop", "discard")),
    }),
  ),
  unique: optionValue(
    hostileOptions({
      key: optionValue(
        fc.oneof(
          hostileText,
          fc.constant((args: unknown) => String(args)),
        ),
      ),
      mode: optionValue(fc.constantFrom("waiting", "running", "finished", "replace")),
      period: optionValue(fc.constantFrom("1m", 1000)),
    }),
  ),
  middleware: optionValue(
    fc.array(
      fc.oneof(
        fc.constant(async () => {}),
        anyValue,
      ),
      { maxLength: 2 },
    ),
  ),
  schema: optionValue(anyValue),
});

const definition = fc.record({
  by: fc.constantFrom("defineJob" as const, "declareJob" as const),
  name: fc.oneof(fc.constantFrom("report", "send-email"), hostileText, anyValue),
  handler: fc.oneof({ weight: 4, arbitrary: fc.constant(async () => {}) }, { weight: 1, arbitrary: anyValue }),
  options: fc.oneof(fc.constant(undefined), jobOptions),
});

describe("job definitions under fuzzed names and options", () => {
  test(
    "every refusal is a named error and declares nothing: the name stays free for a correct definition",
    async () => {
      await fc.assert(
        fc.asyncProperty(definition, async (fuzzed) => {
          const d = materialize(fuzzed);
          // No database is opened: defining a job checks its options and touches no table.
          const firm = new FirmQueue({ databaseUrl: "sqlite::memory:", logger: silentLogger });
          try {
            const result = await outcome(
              () =>
                d.by === "defineJob"
                  ? firm.defineJob(d.name as string, d.handler as never, d.options as never)
                  : firm.declareJob(d.name as string, d.options as never),
              () => `${d.by} ${show(fuzzed)}`,
            );
            if (result.accepted) {
              expect(firm.jobNames).toEqual([d.name]);
              return;
            }
            expect(firm.jobNames, `${show(fuzzed)} was refused but declared`).toEqual([]);
            if (typeof d.name === "string" && (d.name === "report" || d.name === "send-email"))
              expect(() => firm.defineJob(d.name as string, async () => {})).not.toThrow();
          } finally {
            await firm.close();
          }
        }),
        fuzzParameters(),
      );
    },
    FUZZ_CASE_TIMEOUT_MS,
  );
});
