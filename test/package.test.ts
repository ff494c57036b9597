import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packedProject, type PackedProject } from "./support/packed-project.js";
import { ROOT } from "./support/processes.js";

const run = promisify(execFile);
const bin = (name: string) => join(ROOT, "node_modules", ".bin", name);

// The package as published: one tarball, checked by publint and arethetypeswrong, then used by
// a fresh project as ESM, as CommonJS, and from TypeScript under nodenext and bundler resolution.
describe("the packed package", () => {
  let project: PackedProject;
  beforeAll(async () => {
    // SQLite's driver only: the project shows what an app that installed one driver gets.
    project = await packedProject(["better-sqlite3"]);
  }, 120_000);
  afterAll(() => project?.remove());

  it("passes publint and arethetypeswrong (ESM only: CommonJS loads it through require(esm))", async () => {
    expect(await project.exec(bin("publint"), ["run", project.tarball, "--strict"])).toContain("All good");
    await project.exec(bin("attw"), [project.tarball, "--profile", "esm-only"]);
  }, 120_000);

  it("declares the drivers, prom-client and NestJS as optional peers and depends on nothing native", () => {
    expect(Object.keys(project.manifest.dependencies ?? {}).sort()).toEqual([
      // The CLI's confirmation prompt, progress bars and tables; all plain JavaScript.
      "@clack/prompts",
      "cli-progress",
      "cli-table3",
      "commander",
      "croner",
      "jiti",
      "kysely",
    ]);
    expect(Object.keys(project.manifest.peerDependencies ?? {}).sort()).toEqual([
      "@nestjs/common",
      "@nestjs/core",
      "@opentelemetry/api",
      "better-sqlite3",
      "mysql2",
      "pg",
      "prom-client",
    ]);
    expect(project.manifest.peerDependenciesMeta).toEqual({
      "@nestjs/common": { optional: true },
      "@nestjs/core": { optional: true },
      "@opentelemetry/api": { optional: true },
      "better-sqlite3": { optional: true },
      mysql2: { optional: true },
      pg: { optional: true },
      "prom-client": { optional: true },
    });
  });

  it("runs no script when installed: it is built before packing (prepack), not on install", () => {
    const scripts = (project.manifest.scripts ?? {}) as Record<string, string>;
    for (const hook of ["preinstall", "install", "postinstall", "prepare"]) expect(scripts[hook], hook).toBeUndefined();
    expect(scripts.prepack).toBe("npm run build");
  });

  it("runs as an ES module, names the missing driver and its install command, and takes the app's handle and transaction", async () => {
    const out = await project.exec(process.execPath, ["esm.mjs", join(project.dir, "esm.sqlite3")]);
    expect(out).toBe(
      'hello esm\nfirm-queue needs the "pg" package for PostgreSQL databases; install it with: npm install pg\n' +
        "ran 1 of the app's transactional jobs\nhandle still open: true\n",
    );
  }, 60_000);

  it("runs from CommonJS", async () => {
    expect(await project.exec(process.execPath, ["cjs.cjs", join(project.dir, "cjs.sqlite3")])).toBe("hello cjs\n");
  }, 60_000);

  it("type-checks with TypeScript alone (no @types/node) under nodenext, and the compiled ESM and CommonJS run", async () => {
    await project.exec(bin("tsc"), ["-p", "tsconfig.nodenext.json"]);
    expect(await project.exec(process.execPath, ["out/typed-main.mjs", join(project.dir, "typed.sqlite3")])).toBe(
      "hello typed (job) number\n",
    );
    expect(await project.exec(process.execPath, ["out/typed-cjs.cjs", join(project.dir, "cts.sqlite3")])).toBe(
      "hello cts\n",
    );
  }, 120_000);

  it("type-checks under bundler resolution", async () => {
    await project.exec(bin("tsc"), ["-p", "tsconfig.bundler.json"]);
  }, 120_000);

  it("ships the sources its source maps point at", async () => {
    const listing = await project.exec("tar", ["-tzf", project.tarball]);
    expect(listing).toContain("package/src/index.ts");
    expect(listing).toContain("package/dist/index.js.map");
    expect(listing).toContain("package/LICENSE");
    const map = JSON.parse(await project.exec("cat", ["node_modules/firm-queue/dist/index.js.map"])) as {
      sources: string[];
    };
    expect(map.sources).toEqual(["../src/index.ts"]);
    await project.exec("test", ["-f", "node_modules/firm-queue/dist/../src/index.ts"]);
  });
});

describe("the repository's install", () => {
  it("leaves no dependency's install script unreviewed, so a contributor's npm install prints no warning", async () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
      allowScripts: Record<string, boolean>;
      devDependencies: Record<string, string>;
    };
    // better-sqlite3 compiles (or fetches) its native module on install; 13.x crashes Node 20.
    expect(manifest.allowScripts["better-sqlite3"]).toBe(true);
    expect(manifest.devDependencies["better-sqlite3"]).toMatch(/^\^12\./);
    const { stdout } = await run("npm", ["approve-scripts", "--allow-scripts-pending", "--offline"], { cwd: ROOT });
    expect(stdout).toContain("No packages with unreviewed install scripts");
  }, 60_000);
});
