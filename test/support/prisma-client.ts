// A Prisma 7 client for integration tests, generated for one database on first use and run
// through a driver adapter (no query engine binary).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaMariaDb } from "@prisma/adapter-mariadb";
import { PrismaPg } from "@prisma/adapter-pg";
import type { DialectName } from "../../src/database/dialect.js";
import { ROOT } from "./processes.js";

/** The members of a generated PrismaClient the tests use. */
export interface TestPrismaClient {
  $transaction<T>(work: (tx: TestPrismaTransaction) => Promise<T>): Promise<T>;
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
  $disconnect(): Promise<void>;
}

/** An interactive transaction of {@link TestPrismaClient}, with the app's one model. */
export interface TestPrismaTransaction {
  $queryRawUnsafe(query: string, ...values: unknown[]): Promise<unknown>;
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
  order: { create(args: { data: { email: string } }): Promise<{ id: number; email: string }> };
}

const PROVIDERS = { sqlite: "sqlite", postgres: "postgresql", mysql: "mysql" } as const;

/**
 * `prisma generate` for `dialect` into .tmp/prisma/<version>/<dialect> (once per checkout and Prisma version). The Prisma CLI
 * makes sure its schema engine is present when it starts, downloading it if not, although
 * `generate` never runs it; where nothing but the npm registry is reachable, a stub stands in
 * (see docs/integration.md).
 */
function generatedClient(dialect: DialectName): string {
  const prisma = join(ROOT, "node_modules", "prisma");
  const { version } = JSON.parse(readFileSync(join(prisma, "package.json"), "utf8")) as { version: string };
  const dir = join(ROOT, ".tmp", "prisma", version, dialect);
  const client = join(dir, "generated", "client.ts");
  if (existsSync(client)) return client;
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "schema.prisma"),
    `generator client {
  provider = "prisma-client"
  output   = "./generated"
}

datasource db {
  provider = "${PROVIDERS[dialect]}"
}

model Order {
  id    Int    @id @default(autoincrement())
  email String
  @@map("app_orders")
}
`,
  );
  const engines = join(ROOT, "node_modules", "@prisma", "engines");
  const env: Record<string, string | undefined> = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: "1" };
  if (!readdirSync(engines).some((file) => file.startsWith("schema-engine"))) {
    const stub = join(dir, "schema-engine-stub");
    writeFileSync(stub, '#!/bin/sh\necho "firm-queue tests: no schema engine here" >&2\nexit 1\n', { mode: 0o755 });
    env.PRISMA_SCHEMA_ENGINE_BINARY = stub;
  }
  execFileSync(
    process.execPath,
    [join(prisma, "build", "index.js"), "generate", "--schema", join(dir, "schema.prisma")],
    { cwd: dir, env, stdio: "pipe" },
  );
  return client;
}

/** A PrismaClient on `url` through the driver adapter for `dialect`. */
export async function openPrisma(dialect: DialectName, url: string): Promise<TestPrismaClient> {
  const { PrismaClient } = (await import(pathToFileURL(generatedClient(dialect)).href)) as {
    PrismaClient: new (options: { adapter: unknown }) => TestPrismaClient;
  };
  const adapter =
    dialect === "sqlite"
      ? new PrismaBetterSqlite3({ url: url.replace(/^sqlite:(\/\/)?/, "") })
      : dialect === "postgres"
        ? new PrismaPg({ connectionString: url })
        : new PrismaMariaDb(url.replace(/^mysql:/, "mariadb:"));
  return new PrismaClient({ adapter });
}

/** The app's own table, created the way its migrations would. */
export function createOrdersTable(dialect: DialectName): string {
  return {
    sqlite: "CREATE TABLE app_orders (id INTEGER PRIMARY KEY AUTOINCREMENT, email TEXT NOT NULL)",
    postgres: "CREATE TABLE app_orders (id SERIAL PRIMARY KEY, email TEXT NOT NULL)",
    mysql: "CREATE TABLE app_orders (id INT AUTO_INCREMENT PRIMARY KEY, email VARCHAR(255) NOT NULL)",
  }[dialect];
}
