// better-sqlite3 13 is built for Node-API 10. On a Node with an older Node-API (Node 20, and 22
// before 22.14) loading it kills the process with a segmentation fault, before any JavaScript
// error exists. firm-queue checks first and throws an UnsupportedDriverError instead.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installBetterSqlite3 } from "../../scripts/runtimes.mjs";
import { packedProject, type PackedProject } from "../support/packed-project.js";
import { ROOT } from "../support/processes.js";

const oldNodeApi = Number(process.versions.napi) < 10;

describe.runIf(oldNodeApi)(
  `better-sqlite3 13 on Node ${process.versions.node} (Node-API ${process.versions.napi})`,
  () => {
    let project: PackedProject;
    let dir: string;
    beforeAll(async () => {
      project = await packedProject([], {
        links: { "better-sqlite3": await installBetterSqlite3() },
        files: join(ROOT, "test", "runtimes", "app"),
      });
      dir = mkdtempSync(join(tmpdir(), "firm-queue-unsupported-"));
    }, 180_000);
    afterAll(() => {
      project?.remove();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it("is refused with an UnsupportedDriverError naming the fix, not a crash", async () => {
      process.env.DATABASE_URL = `sqlite:${join(dir, "app.sqlite3")}`;
      const failure = await project
        .exec(process.execPath, ["in-process.mjs"])
        .then(() => "ran")
        .catch((error: Error) => error.message);
      expect(failure).toContain("UnsupportedDriverError");
      expect(failure).toContain(`better-sqlite3 13.`);
      expect(failure).toContain("install better-sqlite3 12 (npm install better-sqlite3@12)");
    });
  },
);
