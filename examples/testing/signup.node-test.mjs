// The sign-up, tested with node:test and firm-queue/testing (docs/testing-apps.md).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createTestQueue, performJob } from "firm-queue/testing";
import { firm, recurring, sendWelcome, sent, signUp } from "./app.mjs";

describe("sign-up", () => {
  let testing;
  before(async () => {
    testing = await createTestQueue(firm, { recurring });
  });
  after(() => firm.close());

  it("enqueues a welcome email for the new user", async () => {
    await signUp(201);
    await testing.assertEnqueued({ name: "send-welcome", args: { userId: 201 } });
    await testing.refuteEnqueued({ name: "send-follow-up", args: { userId: 201 } });
  });

  it("sends the follow-up three days after the welcome", async () => {
    await testing.runAll();
    assert.ok(sent.includes("welcome 201"));
    await testing.assertEnqueued({ name: "send-follow-up", args: { userId: 201 } });
    testing.advance("3d");
    await testing.runAll();
    assert.ok(sent.includes("follow-up 201"));
  });

  it("the welcome handler returns what it delivered", async () => {
    const { result } = await performJob(sendWelcome, { userId: 202 });
    assert.deepEqual(result, { delivered: true, userId: 202 });
  });
});
