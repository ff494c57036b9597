import { expect, test } from "vitest";
import { describeEachDatabase, waitFor } from "./support/harness.js";
import { spawnCli } from "./support/processes.js";
import { BAD_HOSTS, rawRequest } from "./support/raw-http.js";

/** The requests that used to end the process before any authentication, then a normal one. */
async function survivesMalformedRequests(port: number, expected: number, rebound: number): Promise<void> {
  for (const host of BAD_HOSTS) expect((await rawRequest(port, { target: "/", host })).status, host).toBe(400);
  for (const target of ["//", "///", "//?", "//@"]) {
    const answer = await rawRequest(port, { target });
    expect(answer.status, target).toBeGreaterThanOrEqual(400);
    expect(answer.status, target).toBeLessThan(500);
  }
  expect((await rawRequest(port, { target: "/", host: `attacker.example:${port}` })).status).toBe(rebound);
  expect((await rawRequest(port, { target: "/" })).status).toBe(expected);
}

describeEachDatabase("firm-queue dashboard", (env) => {
  test("serves the dashboard until TERM; refuses a public address without credentials", async () => {
    const firm = env.firm();
    const job = firm.defineJob("hello", async () => {});
    await job.enqueue({ who: "cli" }, { queue: "cli-queue" });

    const refused = await spawnCli(["dashboard", "--database-url", env.url, "--host", "0.0.0.0", "--port", "0"])
      .finished;
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("will not listen on 0.0.0.0 without authentication");
    // A name that only looks like a loopback address.
    const named = await spawnCli(["dashboard", "--database-url", env.url, "--host", "127.evil.example", "--port", "0"])
      .finished;
    expect(named.code).toBe(1);
    expect(named.stderr).toContain("will not listen on 127.evil.example without authentication");

    const served = spawnCli(["dashboard", "--database-url", env.url, "--port", "0", "--read-only"]);
    try {
      await waitFor(() => /dashboard on (http:\/\/\S+)/.test(served.output()), 20_000, "the dashboard to listen");
      const url = /dashboard on (http:\/\/\S+)/.exec(served.output())![1]!;
      expect(served.output()).toContain("(read-only)");
      const page = await (await fetch(url)).text();
      expect(page).toContain("cli-queue");
      expect(page).toContain("read-only");
      await survivesMalformedRequests(Number(new URL(url).port), 200, 403);
    } finally {
      served.child.kill("SIGTERM");
    }
    expect((await served.finished).code).toBe(0);
  });

  // (Listening beyond loopback is not tried here: tests keep to loopback addresses.)
  test("basic credentials from the environment are required once set; --allowed-host lists the hosts", async () => {
    const allowed = ["--allowed-host", "127.0.0.1", "--allowed-host", "jobs.example"];
    const served = spawnCli(["dashboard", "--database-url", env.url, "--port", "0", ...allowed], {
      FIRM_QUEUE_DASHBOARD_USERNAME: "ops",
      FIRM_QUEUE_DASHBOARD_PASSWORD: "secret-password",
    });
    try {
      await waitFor(() => /dashboard on http:\/\/\S+:(\d+)/.test(served.output()), 20_000, "the dashboard to listen");
      const port = /dashboard on http:\/\/\S+:(\d+)/.exec(served.output())![1]!;
      expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(401);
      const authorization = { authorization: `Basic ${Buffer.from("ops:secret-password").toString("base64")}` };
      const ok = await fetch(`http://127.0.0.1:${port}/`, { headers: authorization });
      expect(ok.status).toBe(200);
      await survivesMalformedRequests(Number(port), 401, 403);
      const listed = await rawRequest(Number(port), { target: "/", host: "jobs.example", headers: authorization });
      expect(listed.status).toBe(200);
    } finally {
      served.child.kill("SIGTERM");
    }
    expect((await served.finished).code).toBe(0);
  });
});
