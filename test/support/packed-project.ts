// A fresh project that installs this repository's packed tarball, offline: the tarball is
// unpacked into its node_modules, and firm-queue's dependencies are linked from this checkout's
// node_modules (already installed), so nothing is downloaded.
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { ROOT } from "./processes.js";

const run = promisify(execFile);

export interface PackedProject {
  readonly dir: string;
  readonly tarball: string;
  /** The packed package.json. */
  readonly manifest: {
    dependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
    [key: string]: unknown;
  };
  /** Run a command in the project; resolves to its stdout, rejects with its output on failure. */
  exec(command: string, args: readonly string[]): Promise<string>;
  remove(): void;
}

/** What else a {@link packedProject} gets. */
export interface PackedProjectOptions {
  /** Packages linked from elsewhere than this checkout: name to package directory. */
  readonly links?: Readonly<Record<string, string>>;
  /** The directory whose files are copied into the project; default test/consumer. */
  readonly files?: string;
}

/**
 * Pack (without running the build again: `npm test` has just built dist/), unpack into a temp
 * project, link the dependencies plus `drivers` (and `links`), and copy the project's files.
 */
export async function packedProject(
  drivers: readonly string[],
  { links = {}, files = join(ROOT, "test", "consumer") }: PackedProjectOptions = {},
): Promise<PackedProject> {
  const dir = mkdtempSync(join(tmpdir(), "firm-queue-consumer-"));
  const { stdout } = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dir], { cwd: ROOT });
  const tarball = join(dir, (JSON.parse(stdout) as Array<{ filename: string }>)[0]!.filename);
  const modules = join(dir, "node_modules");
  mkdirSync(modules);
  await run("tar", ["-xzf", tarball, "-C", modules]);
  renameSync(join(modules, "package"), join(modules, "firm-queue"));
  const manifest = JSON.parse(
    readFileSync(join(modules, "firm-queue", "package.json"), "utf8"),
  ) as PackedProject["manifest"];
  for (const name of [...Object.keys(manifest.dependencies ?? {}), ...drivers]) {
    // A scoped name (@clack/prompts) links inside its scope's folder.
    mkdirSync(dirname(join(modules, name)), { recursive: true });
    symlinkSync(join(ROOT, "node_modules", name), join(modules, name), "dir");
  }
  for (const [name, target] of Object.entries(links)) symlinkSync(target, join(modules, name), "dir");
  for (const file of readdirSync(files)) cpSync(join(files, file), join(dir, file));
  return {
    dir,
    tarball,
    manifest,
    async exec(command, args) {
      try {
        return (await run(command, [...args], { cwd: dir, env: { ...process.env, NODE_ENV: "test" } })).stdout;
      } catch (error) {
        const { stdout: out = "", stderr = "" } = error as { stdout?: string; stderr?: string };
        throw new Error(`${command} ${args.join(" ")} failed:\n${out}${stderr}`);
      }
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
