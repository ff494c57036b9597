// The sign-up, tested with vitest and firm-queue/testing (docs/testing-apps.md).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestQueue, performJob } from "firm-queue/testing";
import { firm, recurring, sendWelcome, sent, signUp } from "./app.mjs";

describe("sign-up", () => {
  let testing;
  beforeAll(async () => {
    testing = await createTestQueue(firm, { recurring });
  });
  afterAll(() => firm.close());

  it("enqueues a welcome email for the new user", async () => {
    await signUp(101);
    await testing.assertEnqueued({ name: "send-welcome", args: { userId: 101 } });
    await testing.refuteEnqueued({ name: "send-follow-up", args: { userId: 101 } });
  });

  it("sends the follow-up three days after the welcome", async () => {
    await testing.runAll();
    expect(sent).toContain("welcome 101");
    await testing.assertEnqueued({ name: "send-follow-up", args: { userId: 101 } });
    testing.advance("3d");
    await testing.runAll();
    expect(sent).toContain("follow-up 101");
    await testing.refuteEnqueued({ name: "send-follow-up", args: { userId: 101 } });
  });

  it("sends the digest every hour", async () => {
    const before = sent.filter((line) => line === "digest").length;
    testing.advance("1h");
    await testing.runAll();
    expect(sent.filter((line) => line === "digest").length).toBe(before + 1);
  });

  it("the welcome handler reports progress and returns what it delivered", async () => {
    const { result, progress } = await performJob(sendWelcome, { userId: 102 });
    expect(result).toEqual({ delivered: true, userId: 102 });
    expect(progress).toEqual([{ step: "rendering" }]);
  });
});
