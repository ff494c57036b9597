// The smoke suite on the runtimes besides the machine's Node (vitest.runtimes.config.ts; not part
// of `npm test`): Node 22 and 24 on SQLite and PostgreSQL, Bun on all three databases. Each runs
// the README's getting-started flow in a fresh project that installed the packed package: migrate
// with the CLI, enqueue from the app, `firm-queue start` (fork mode) runs the jobs in child
// processes of that runtime and stops on TERM, and a worker in the app's own process (async mode).
// The runtimes come from their registry packages (scripts/runtimes.mjs).
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installBetterSqlite3, installRuntime, runtimeNames, type Runtime } from "../../scripts/runtimes.mjs";
import type { DialectName } from "../../src/database/dialect.js";
import { describeEachDatabase, waitFor } from "../support/harness.js";
import { packedProject, type PackedProject } from "../support/packed-project.js";
import { ROOT } from "../support/processes.js";

const APP = join(ROOT, "test", "runtimes", "app");

/** Which databases each runtime is smoke-tested on. */
const DATABASES: Record<string, readonly DialectName[]> = {
  node22: ["sqlite", "postgres"],
  node24: ["sqlite", "postgres"],
  bun: ["sqlite", "postgres", "mysql"],
};

function selectedRuntimes(): string[] {
  const names = (process.env.FIRM_QUEUE_TEST_RUNTIMES ?? runtimeNames().join(","))
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  for (const name of names)
    if (!(name in DATABASES)) throw new Error(`unknown runtime ${name} in FIRM_QUEUE_TEST_RUNTIMES`);
  return names;
}

interface Ran {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly output: string;
}

/** A process of `bin` in the project, its output collected; `stop()` sends TERM. */
function launch(bin: string, args: readonly string[], cwd: string, env: Record<string, string>) {
  const child = spawn(bin, args, { cwd, env: { ...process.env, NODE_ENV: "test", ...env }, stdio: "pipe" });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const finished = new Promise<Ran>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, output }));
  });
  return { child, finished, output: () => output };
}

async function runTo(bin: string, args: readonly string[], cwd: string, env: Record<string, string>): Promise<Ran> {
  const ran = await launch(bin, args, cwd, env).finished;
  if (ran.code !== 0) throw new Error(`${args.join(" ")} exited ${ran.code ?? ran.signal}:\n${ran.output}`);
  return ran;
}

const CLI = join("node_modules", "firm-queue", "dist", "cli", "main.js");

for (const name of selectedRuntimes()) {
  describe(`on ${name}`, () => {
    let runtime: Runtime;
    let project: PackedProject;
    beforeAll(async () => {
      runtime = await installRuntime(name);
      // Node lines get better-sqlite3 13 (Node-API builds shipped in the package); Bun gets no
      // better-sqlite3 at all, so SQLite goes through bun:sqlite.
      const links: Record<string, string> =
        runtime.kind === "node" ? { "better-sqlite3": await installBetterSqlite3() } : {};
      project = await packedProject(["pg", "mysql2"], { links, files: APP });
    }, 180_000);
    afterAll(() => project?.remove());

    const expectRanHere = (result: { bun: string | null; node: string }) => {
      if (runtime.kind === "bun") expect(`${result.bun}`).toBe(runtime.version);
      else expect(`v${result.node}`).toBe(runtime.version);
    };

    describeEachDatabase(
      `the getting-started flow on ${name}`,
      (env) => {
        const appEnv = () => ({ DATABASE_URL: env.url });

        it("migrates with the CLI, enqueues from the app, runs the jobs with `firm-queue start` (fork mode) and stops on TERM", async () => {
          const { bin } = runtime;
          // The harness migrated this database already: migrate finds nothing to do, as on a redeploy.
          expect((await runTo(bin, [CLI, "migrate", "--require", "./jobs.mjs"], project.dir, appEnv())).output).toMatch(
            /up to date|Applied/,
          );
          await runTo(bin, [CLI, "migrate", "--status", "--require", "./jobs.mjs"], project.dir, appEnv());
          await runTo(bin, [CLI, "check", "--require", "./jobs.mjs"], project.dir, appEnv());
          const enqueued = JSON.parse((await runTo(bin, ["enqueue.mjs"], project.dir, appEnv())).output) as {
            now: { status: string; id: number };
            later: { status: string; state: string };
            many: Array<{ status: string; id: number }>;
            byName: { status: string; id: number };
            unique: Array<{ status: string; id: number }>;
          };
          expect(enqueued.now.status).toBe("created");
          expect(enqueued.later).toMatchObject({ status: "created", state: "scheduled" });
          expect(enqueued.many.map((job) => job.status)).toEqual(["created", "created"]);
          expect(enqueued.unique.map((job) => job.status)).toEqual(["created", "duplicate"]);
          expect(enqueued.unique[1]!.id).toBe(enqueued.unique[0]!.id);

          const worker = launch(bin, [CLI, "start", "--require", "./jobs.mjs"], project.dir, appEnv());
          const firm = env.firm();
          const due = [
            enqueued.now.id,
            ...enqueued.many.map((job) => job.id),
            enqueued.byName.id,
            enqueued.unique[0]!.id,
          ];
          try {
            await waitFor(
              async () =>
                (await Promise.all(due.map((id) => firm.getJob(id)))).every((job) => job?.state === "finished"),
              30_000,
              `the jobs to run (output so far:\n${worker.output()})`,
            );
          } finally {
            worker.child.kill("SIGTERM");
          }
          const stopped = await worker.finished;
          expect(stopped.output).toMatch(/mode=fork/);
          expect(stopped.output).toMatch(/supervisor stopped/);
          expect({ code: stopped.code, signal: stopped.signal }).toEqual({ code: 0, signal: null });
          const result = (await firm.getJob(enqueued.now.id))!.result as {
            userId: number;
            pid: number;
            queue: string;
            bun: string | null;
            node: string;
          };
          expect(result).toMatchObject({ userId: 42, queue: "mail" });
          expectRanHere(result);
          // Fork mode: a child process of the supervisor ran it.
          expect(result.pid).not.toBe(worker.child.pid);
        }, 120_000);

        it("runs a worker in the app's own process (async mode)", async () => {
          const ran = await runTo(runtime.bin, ["in-process.mjs"], project.dir, appEnv());
          const { mode, state, result } = JSON.parse(ran.output.trim().split("\n").at(-1)!) as {
            mode: string;
            state: string;
            result: { userId: number; bun: string | null; node: string };
          };
          expect({ mode, state, userId: result.userId }).toEqual({ mode: "async", state: "finished", userId: 7 });
          expectRanHere(result);
        }, 60_000);
      },
      DATABASES[name],
    );
  });
}
