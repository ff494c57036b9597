import { afterEach, expect, it } from "vitest";
import { describeEachDatabaseAtOnce } from "./support/harness.js";
import { runCli, type Spawned } from "./support/processes.js";
import { PROCESS_CONFIG, startSupervisor, waitForProcesses } from "./support/supervised.js";

// The databases side by side: the test waits on process starts and heartbeats growing old.
describeEachDatabaseAtOnce("firm-queue check --live", (env) => {
  let running: Spawned | undefined;

  // Before the harness empties the tables (see stopProcesses in support/processes.ts).
  afterEach(async () => {
    if (running && running.child.exitCode === null && running.child.signalCode === null) {
      running.child.kill("SIGTERM");
      await running.finished;
    }
    running = undefined;
  });

  const check = (...args: string[]) =>
    runCli(["check", "--live", "--config", PROCESS_CONFIG, ...args], { FIRM_QUEUE_DATABASE_URL: env.url });

  it("fails without live processes, passes with a running deployment, fails when a queue's oldest ready job waits too long", async () => {
    const nobody = await check();
    expect(nobody.code).toBe(1);
    expect(nobody.stdout).toMatch(/^ok {3}database: answered in /m);
    expect(nobody.stdout).toMatch(/^FAIL processes: no Supervisor heartbeating; no Worker heartbeating/m);

    running = startSupervisor(env, [], {}, { detached: true });
    await waitForProcesses(await env.db(), running);
    const healthy = await check();
    expect(healthy.stdout).toMatch(/^ok {3}processes: 1 Supervisor, 1 Worker, 1 Dispatcher heartbeating within 3 s$/m);
    expect(healthy.stdout).toMatch(/^ok {3}latency: /m);
    expect(healthy.code).toBe(0);

    // A job waiting in a paused queue grows old while the deployment is otherwise fine.
    const firm = env.firm();
    await firm.queues.pause("slow");
    await firm.enqueue("record", null, { queue: "slow", undeclared: true });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const late = await check("--max-latency", "10ms", "--queue", "slow");
    expect(late.stdout).toMatch(/^FAIL latency: oldest ready job over 10 ms in "slow" \d+ (ms|s) \(1 ready\)$/m);
    expect(late.code).toBe(1);
    const elsewhere = await check("--max-latency", "10ms", "--queue", "default");
    expect(elsewhere.stdout).toMatch(/^ok {3}latency: no job waiting in 1 queue\(s\)/m);
    expect(elsewhere.code).toBe(0);

    // The whole deployment dies at once (a host lost): its rows stay, their heartbeats age. One
    // signal to the whole process group: killing the supervisor first would give its children a
    // moment to notice and deregister, which a lost host never does.
    process.kill(-running.child.pid!, "SIGKILL");
    await running.finished;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const overdue = await check("--process-alive-threshold", "1s");
    expect(overdue.stdout).toMatch(
      /^FAIL processes: no Supervisor heartbeating; no Worker heartbeating; 3 overdue \(Supervisor supervisor-[0-9a-f]+ on .+, \d+ s; Worker /m,
    );
    expect(overdue.code).toBe(1);
  });

  it("rejects a bad --max-latency without connecting", async () => {
    const bad = await check("--max-latency", "soon");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("--max-latency must be milliseconds or a string like");
  });
});
