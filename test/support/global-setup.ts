// Decides which databases this test run covers and makes sure each has a
// server: a URL given in the environment, or a throwaway one started here and
// stopped at teardown. Tests learn the outcome through inject() (see
// test-database.ts). Runs once, in vitest's main process.

import type { TestProject } from "vitest/node";
import { mariadbAvailable, startMariadb, type RunningServer } from "../../scripts/servers/mariadb.mjs";
import { postgresAvailable, startPostgres } from "../../scripts/servers/postgres.mjs";

export type Dialect = "sqlite" | "postgres" | "mysql";
export const ALL_DIALECTS: readonly Dialect[] = ["sqlite", "postgres", "mysql"];
type ServerDialect = Exclude<Dialect, "sqlite">;

declare module "vitest" {
  export interface ProvidedContext {
    /** The dialects under test, in ALL_DIALECTS order. */
    firmQueueDialects: Dialect[];
    /** Admin (superuser) URL per server dialect under test. */
    firmQueueAdminUrls: Partial<Record<ServerDialect, string>>;
  }
}

const SERVERS: Record<
  ServerDialect,
  { label: string; envVar: string; available: () => boolean; start: () => Promise<RunningServer>; install: string }
> = {
  postgres: {
    label: "PostgreSQL",
    envVar: "FIRM_QUEUE_TEST_POSTGRES_URL",
    available: postgresAvailable,
    start: () => startPostgres(),
    install: "install PostgreSQL (Debian: apt-get install postgresql) or put its bin dir on PATH",
  },
  mysql: {
    label: "MariaDB",
    envVar: "FIRM_QUEUE_TEST_MYSQL_URL",
    available: mariadbAvailable,
    start: () => startMariadb(),
    install: "install MariaDB (Debian: apt-get install mariadb-server)",
  },
};

/** What happened to one dialect: under test (with its admin URL), or skipped and why. */
type Outcome =
  | { dialect: Dialect; url?: string; server?: RunningServer; note: string }
  | { dialect: Dialect; skipped: string };

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const wanted = selectedDialects(process.env.FIRM_QUEUE_TEST_DIALECTS);
  const settled = await Promise.allSettled(wanted.map(prepare));
  const outcomes = settled.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
  const servers = outcomes.flatMap((outcome) => ("server" in outcome && outcome.server ? [outcome.server] : []));
  const stopAll = async () => {
    await Promise.all(servers.map((server) => server.stop()));
  };

  const failures = settled.flatMap((result) => (result.status === "rejected" ? [result.reason] : []));
  if (failures.length > 0) {
    await stopAll();
    throw failures.length === 1
      ? failures[0]
      : new AggregateError(
          failures,
          failures.map((failure) => (failure instanceof Error ? failure.message : String(failure))).join("\n"),
        );
  }

  report(outcomes);
  const underTest = outcomes.filter((outcome) => !("skipped" in outcome));
  project.provide(
    "firmQueueDialects",
    underTest.map((outcome) => outcome.dialect),
  );
  project.provide(
    "firmQueueAdminUrls",
    Object.fromEntries(
      underTest.flatMap((outcome) => ("url" in outcome && outcome.url ? [[outcome.dialect, outcome.url]] : [])),
    ),
  );
  return stopAll;
}

/** FIRM_QUEUE_TEST_DIALECTS, e.g. "sqlite,postgres"; unset or empty means all. */
function selectedDialects(value: string | undefined): Dialect[] {
  const names = (value ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  if (names.length === 0) return [...ALL_DIALECTS];
  const unknown = names.filter((name) => !(ALL_DIALECTS as readonly string[]).includes(name));
  if (unknown.length > 0) {
    throw new Error(
      `FIRM_QUEUE_TEST_DIALECTS: unknown ${unknown.join(", ")}; use a comma list of ${ALL_DIALECTS.join(", ")}.`,
    );
  }
  return ALL_DIALECTS.filter((dialect) => names.includes(dialect));
}

async function prepare(dialect: Dialect): Promise<Outcome> {
  if (dialect === "sqlite") return { dialect, note: "temp files" };
  const spec = SERVERS[dialect];

  const given = process.env[spec.envVar];
  if (given) return { dialect, url: given, note: `server from ${spec.envVar}` };

  if (!spec.available()) {
    const why = `${spec.label} is not installed on this machine`;
    // A CI run that quietly skips a database would look green while testing less.
    if (isCI()) throw new Error(`${why}, and CI must test ${dialect}: ${spec.install}, or set ${spec.envVar}.`);
    return { dialect, skipped: why };
  }

  const started = Date.now();
  const server = await spec.start();
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  return {
    dialect,
    url: server.url,
    server,
    note: `throwaway ${spec.label} at ${server.url}, started in ${seconds} s`,
  };
}

function isCI(): boolean {
  const value = (process.env.CI ?? "").trim().toLowerCase();
  return value !== "" && value !== "0" && value !== "false";
}

function report(outcomes: Outcome[]): void {
  for (const dialect of ALL_DIALECTS) {
    const outcome = outcomes.find((candidate) => candidate.dialect === dialect);
    const name = dialect.padEnd(8);
    if (!outcome) console.log(`[firm-queue] ${name} not under test (not in FIRM_QUEUE_TEST_DIALECTS)`);
    else if ("skipped" in outcome) console.log(`[firm-queue] ${name} SKIPPED: ${outcome.skipped}`);
    else console.log(`[firm-queue] ${name} under test: ${outcome.note}`);
  }
  for (const outcome of outcomes) {
    if (!("skipped" in outcome) || outcome.dialect === "sqlite") continue;
    const spec = SERVERS[outcome.dialect];
    const bar = "!".repeat(78);
    console.warn(
      [
        "",
        bar,
        `!!! ${outcome.dialect.toUpperCase()} IS NOT BEING TESTED: ${outcome.skipped}.`,
        `!!! To test it, ${spec.install},`,
        `!!! or point ${spec.envVar} at a server's admin URL.`,
        `!!! (With CI set, this is an error instead of a warning.)`,
        bar,
        "",
      ].join("\n"),
    );
  }
}
