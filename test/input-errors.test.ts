import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigurationError, DatabaseUrlError, FirmQueue, JobNotFoundError, silentLogger } from "../src/index.js";
import { describeEachDatabase } from "./support/harness.js";

describeEachDatabase(
  "one rule for ids: malformed is a ConfigurationError, missing is null to read and JobNotFoundError to change",
  (env) => {
    it("getJob and inspect.job agree", async () => {
      const firm = env.firm();
      for (const bad of ["7", -1, 0, 1.5, Number.NaN, null]) {
        await expect(firm.getJob(bad as number)).rejects.toThrow(ConfigurationError);
        await expect(firm.inspect.job(bad as number)).rejects.toThrow(ConfigurationError);
      }
      await expect(firm.getJob("7" as unknown as number)).rejects.toThrow(/getJob needs a job id/);
      expect(await firm.getJob(999_999)).toBeNull();
      expect(await firm.inspect.job(999_999)).toBeNull();
    });

    it("operations that change a job throw JobNotFoundError for a missing id, and ConfigurationError for a malformed one", async () => {
      const firm = env.firm();
      await expect(firm.failedJobs.retry(999_999)).rejects.toThrow(JobNotFoundError);
      await expect(firm.failedJobs.delete(999_999)).rejects.toThrow(JobNotFoundError);
      await expect(firm.failedJobs.retry("x" as never)).rejects.toThrow(ConfigurationError);
      await expect(firm.failedJobs.delete(-3)).rejects.toThrow(ConfigurationError);
    });

    it("drain and dispatch refuse options that are not an object, or unknown keys, with ConfigurationError", async () => {
      const firm = env.firm();
      await expect(firm.drain(null as never)).rejects.toThrow(ConfigurationError);
      await expect(firm.drain({ queue: "a" } as never)).rejects.toThrow(/Unknown drain option "queue"/);
      await expect(firm.dispatch(null as never)).rejects.toThrow(ConfigurationError);
      await expect(firm.dispatch({ batch: 5 } as never)).rejects.toThrow(/Unknown dispatch option "batch"/);
    });

    it('onConflict: "drop" drops a job whose key has no free slot; "discard" is its old name', async () => {
      const firm = env.firm();
      const drop = firm.defineJob("drop-new", async (_args: { k: string }) => {}, {
        concurrency: { key: (args) => args.k, onConflict: "drop" },
      });
      expect(drop.options.concurrency?.onConflict).toBe("drop");
      expect(await drop.enqueue({ k: "a" })).toEqual({ status: "created", id: expect.any(Number) });
      expect(await drop.enqueue({ k: "a" })).toEqual({ status: "dropped", id: null });
      const old = firm.defineJob("drop-old", async () => {}, { concurrency: { key: "b", onConflict: "discard" } });
      expect(old.options.concurrency?.onConflict).toBe("drop");
    });
  },
);

describe("bad input errors", () => {
  it("a bad database URL is a ConfigurationError like every bad option", async () => {
    const firm = new FirmQueue({ databaseUrl: "nosuchdb://x", logger: silentLogger });
    const error = await firm.migrate().catch((e: unknown) => e);
    await firm.close();
    expect(error).toBeInstanceOf(DatabaseUrlError);
    expect(error).toBeInstanceOf(ConfigurationError);
  });

  it("firm-queue's own code throws no bare TypeError, RangeError or Error", () => {
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        // The dashboard's browser script is shipped as text and runs in the browser, not here.
        if (entry.isDirectory()) {
          if (entry.name !== "assets") walk(path);
        } else if (path.endsWith(".ts")) {
          readFileSync(path, "utf8")
            .split("\n")
            .forEach((line, index) => {
              if (/new (TypeError|RangeError|Error)\(/.test(line))
                offenders.push(`${path}:${index + 1}: ${line.trim()}`);
            });
        }
      }
    };
    walk(join(import.meta.dirname, "..", "src"));
    // The first two are caught where they are thrown: one becomes a DeserializationError, the
    // other reads a stack. The third guards a misuse no caller makes: the LISTEN connection sends
    // a query only after its connect() resolved.
    const allowed = [
      /src\/serialization\.ts:\d+: throw new Error\(`unknown tag/,
      /src\/call-site\.ts:\d+: const frames = new Error\(\)/,
      /src\/database\/postgres-failover-client\.ts:\d+: .*new Error\("FailoverClient\.query before connect"\)/,
    ];
    expect(offenders.filter((line) => !allowed.some((pattern) => pattern.test(line)))).toEqual([]);
  });
});
