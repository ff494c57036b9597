import { describe, expect, expectTypeOf, it } from "vitest";
import {
  ConfigurationError,
  FirmQueue,
  silentLogger,
  type EnqueuedJob,
  type EnqueueResult,
  type Job,
} from "../src/index.js";
import { concurrencyKeyFor, resolveConcurrency } from "../src/definitions/concurrency-options.js";
import { JobPolicies, FALLBACK_LIMIT } from "../src/definitions/job-policies.js";
import type { DefinitionLookup } from "../src/definitions/job-registry.js";

const firm = () => new FirmQueue({ databaseUrl: "sqlite::memory:", logger: silentLogger });

describe("concurrency options", () => {
  it("fill defaults: to 1, duration 3 minutes, group = job name, block", () => {
    const job = firm().defineJob("sync-account", async (_args: { accountId: string }) => {}, {
      concurrency: { key: (args) => args.accountId },
    });
    expect(job.options.concurrency).toMatchObject({
      to: 1,
      duration: 180_000,
      group: "sync-account",
      onConflict: "block",
    });
    expect(firm().defineJob("plain", async () => {}).options.concurrency).toBeNull();
  });

  it("build the stored key as group/key, from a function or a fixed string", () => {
    const byArgs = resolveConcurrency("sync", {
      key: (args: { id: number }) => args.id,
      group: "accounts",
      to: 2,
      duration: "5s",
    })!;
    expect(byArgs).toMatchObject({ to: 2, duration: 5000, group: "accounts" });
    expect(concurrencyKeyFor("sync", byArgs, { id: 42 })).toBe("accounts/42");
    expect(concurrencyKeyFor("sync", byArgs, { id: 10n ** 20n } as never)).toBe("accounts/100000000000000000000");
    const fixed = resolveConcurrency("report", { key: "all" })!;
    expect(concurrencyKeyFor("report", fixed, { anything: true })).toBe("report/all");
  });

  it.each<[unknown, string]>([
    [{}, "key is required"],
    [{ key: "" }, "key is required"],
    [{ key: 5 }, "key is required"],
    [{ key: () => "a", to: 0 }, "to must be a whole number of at least 1"],
    [{ key: () => "a", to: -1 }, "to must be a whole number of at least 1"],
    [{ key: () => "a", to: 1.5 }, "to must be a whole number of at least 1"],
    [{ key: () => "a", onConflict: "skip" }, 'onConflict must be "block" or "drop"'],
    [{ key: () => "a", onConflict: "discard ", to: 1 }, 'onConflict must be "block" or "drop"'],
    [{ key: () => "a", duration: "soon" }, "duration must be"],
    [{ key: () => "a", duration: 0 }, "duration must be more than 0"],
    [{ key: () => "a", group: "" }, "group must be a non-empty string"],
    [{ key: () => "a", limit: 2 }, 'Unknown defineJob("j") option concurrency "limit"'],
    ["accountId", "must be an object"],
  ])("reject %j when the job is defined", (options, message) => {
    const instance = firm();
    expect(() => instance.defineJob("j", async () => {}, { concurrency: options as never })).toThrow(
      ConfigurationError,
    );
    expect(() => instance.defineJob("j", async () => {}, { concurrency: options as never })).toThrow(message);
    // Nothing was registered: the name is still free.
    expect(instance.jobNames).toEqual([]);
  });

  it("reject jobs that share a group but not its limit", () => {
    const instance = firm();
    instance.defineJob("a", async () => {}, { concurrency: { key: () => "x", group: "g", to: 2 } });
    expect(() =>
      instance.defineJob("b", async () => {}, { concurrency: { key: () => "x", group: "g", to: 3 } }),
    ).toThrow('Jobs "a" and "b" share concurrency group "g" but not its limit');
    expect(() =>
      instance.defineJob("c", async () => {}, { concurrency: { key: () => "x", group: "g", to: 2, duration: "1h" } }),
    ).toThrow("share concurrency group");
    instance.defineJob("d", async () => {}, {
      concurrency: { key: () => "y", group: "g", to: 2, onConflict: "discard" },
    });
    expect(instance.jobNames).toEqual(["a", "d"]);
  });

  it.each<[() => unknown, string]>([
    [() => undefined, "got undefined"],
    [() => null, "got null"],
    [() => ({ id: 1 }), "got an object"],
    [() => "", "got string"],
    [() => Number.NaN, "got number NaN"],
  ])("reject a key function returning a non-key (%s)", (key, message) => {
    const concurrency = resolveConcurrency("j", { key: key as () => string })!;
    expect(() => concurrencyKeyFor("j", concurrency, {})).toThrow(ConfigurationError);
    expect(() => concurrencyKeyFor("j", concurrency, {})).toThrow(message);
  });

  it("reject a key function that throws, and keys too long to store", () => {
    const throwing = resolveConcurrency("j", { key: (args: { a: { b: string } }) => args.a.b })!;
    expect(() => concurrencyKeyFor("j", throwing, {})).toThrow('The concurrency key function of job "j" threw');
    const long = resolveConcurrency("j", { key: (args: { text: string }) => args.text })!;
    expect(concurrencyKeyFor("j", long, { text: "x".repeat(253) })).toHaveLength(255);
    expect(() => concurrencyKeyFor("j", long, { text: "x".repeat(254) })).toThrow("longer than 255 characters");
  });

  it("type enqueue's result without `dropped` unless the definition discards on conflict", () => {
    const instance = firm();
    const plain = instance.defineJob("plain", async (_args: { n: number }) => {});
    const blocking = instance.defineJob("blocking", async (_args: { id: string }) => {}, {
      concurrency: { key: (args) => args.id },
    });
    const explicit = instance.defineJob("explicit", async (_args: { id: string }) => {}, {
      concurrency: { key: (args) => args.id, onConflict: "block" },
    });
    const discarding = instance.defineJob("discarding", async (_args: { id: string }) => {}, {
      concurrency: { key: (args) => args.id, onConflict: "discard" },
    });
    expectTypeOf(plain).toEqualTypeOf<Job<{ n: number }, EnqueuedJob, { n: number }, void>>();
    expectTypeOf(blocking.enqueue).returns.resolves.toEqualTypeOf<EnqueuedJob>();
    expectTypeOf(blocking.enqueue).returns.resolves.toHaveProperty("id").toEqualTypeOf<number>();
    expectTypeOf(explicit.enqueueAll).returns.resolves.toEqualTypeOf<EnqueuedJob[]>();
    expectTypeOf(discarding.enqueue).returns.resolves.toEqualTypeOf<EnqueueResult>();
    expectTypeOf(discarding.enqueue).returns.resolves.toHaveProperty("id").toEqualTypeOf<number | null>();
    expectTypeOf(discarding.enqueueAll).returns.resolves.toEqualTypeOf<EnqueueResult[]>();
    expectTypeOf<Awaited<ReturnType<typeof instance.enqueue>>>().toEqualTypeOf<EnqueueResult>();
    // The key function is checked against the handler's argument type.
    // @ts-expect-error: `missing` is not a property of the arguments
    instance.defineJob("typo", async (_args: { id: string }) => {}, { concurrency: { key: (args) => args.missing } });
  });
});

describe("job policies: concurrency limits", () => {
  it("fall back to one at a time, blocking, for a keyed job defined elsewhere, warning once per name", () => {
    const warnings: unknown[] = [];
    const known = {
      name: "known",
      handler: () => {},
      options: { concurrency: { to: 4, duration: 1000, onConflict: "drop" } },
    };
    const definitions = {
      get: (name: string) => (name === "known" ? known : undefined),
    } as unknown as DefinitionLookup;
    const rules = new JobPolicies(definitions, {
      ...silentLogger,
      warn: (message, fields) => warnings.push({ message, fields }),
    });
    expect(rules.limitFor("known", "known/1")).toEqual({ to: 4, duration: 1000, onConflict: "drop" });
    expect(rules.limitFor("elsewhere", "g/1")).toBe(FALLBACK_LIMIT);
    expect(rules.limitFor("elsewhere", "g/2")).toBe(FALLBACK_LIMIT);
    expect(FALLBACK_LIMIT).toEqual({ to: 1, duration: 180_000, onConflict: "block" });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      message: expect.stringContaining("not defined in this process"),
      fields: { job: "elsewhere" },
    });
  });
});
