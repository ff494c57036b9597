import { expect, test } from "vitest";
import { describeEachDatabase, waitFor } from "./support/harness.js";
import { spawnCli } from "./support/processes.js";

describeEachDatabase("firm-queue dashboard", (env) => {
  test("serves the dashboard until TERM; refuses a public address without credentials", async () => {
    const firm = env.firm();
    const job = firm.defineJob("hello", async () => {});
    await job.enqueue({ who: "cli" }, { queue: "cli-queue" });

    const refused = await spawnCli(["dashboard", "--database-url", env.url, "--host", "0.0.0.0", "--port", "0"])
      .finished;
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("will not listen on 0.0.0.0 without authentication");

    const served = spawnCli(["dashboard", "--database-url", env.url, "--port", "0", "--read-only"]);
    try {
      await waitFor(() => /dashboard on (http:\/\/\S+)/.test(served.output()), 20_000, "the dashboard to listen");
      const url = /dashboard on (http:\/\/\S+)/.exec(served.output())![1]!;
      expect(served.output()).toContain("(read-only)");
      const page = await (await fetch(url)).text();
      expect(page).toContain("cli-queue");
      expect(page).toContain("read-only");
    } finally {
      served.child.kill("SIGTERM");
    }
    expect((await served.finished).code).toBe(0);
  });

  // (Listening beyond loopback is not tried here: tests keep to loopback addresses.)
  test("basic credentials from the environment are required once set", async () => {
    const served = spawnCli(["dashboard", "--database-url", env.url, "--port", "0"], {
      FIRM_QUEUE_DASHBOARD_USERNAME: "ops",
      FIRM_QUEUE_DASHBOARD_PASSWORD: "secret-password",
    });
    try {
      await waitFor(() => /dashboard on http:\/\/\S+:(\d+)/.test(served.output()), 20_000, "the dashboard to listen");
      const port = /dashboard on http:\/\/\S+:(\d+)/.exec(served.output())![1]!;
      expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(401);
      const ok = await fetch(`http://127.0.0.1:${port}/`, {
        headers: { authorization: `Basic ${Buffer.from("ops:secret-password").toString("base64")}` },
      });
      expect(ok.status).toBe(200);
    } finally {
      served.child.kill("SIGTERM");
    }
    expect((await served.finished).code).toBe(0);
  });
});
