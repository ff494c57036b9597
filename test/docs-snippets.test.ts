// Every TypeScript block of the README and docs/, compiled as a strict TypeScript app would:
// strict, exactOptionalPropertyTypes, nodenext, against the built package's own declarations
// (`import "firm-queue"` resolves to dist/ through the package's exports). One program for all
// blocks keeps it to one type-check.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "./support/processes.js";

/**
 * What the blocks take as given: the instance, the application's own functions and values they
 * call. Declared loosely on purpose (a block is checked for how it uses firm-queue, not the app).
 * A block that declares or imports one of these names uses its own.
 */
const CONTEXT = `import type { FirmQueue as FirmQueueClass, Job } from "firm-queue";
declare global {
  // Blocks that show a line or two of a program use the instance, FirmQueue and zod without importing them.
  const FirmQueue: typeof import("firm-queue").FirmQueue;
  type FirmQueue = FirmQueueClass;
  const z: typeof import("zod").z;
  const pino: typeof import("pino").pino;
  const firm: FirmQueue;
  const sendEmail: Job<{ to: string; template: string }>;
  const sendWelcomeEmail: Job<{ userId: number }>;
  const sendConfirmation: Job<{ orderId: number }>;
  // A job in one block, a progress callback of the application's in others.
  const report: Job<{ day: string }> & ((total: number) => void);
  const renderReport: Job<{ reportId: number }>;
  const recipients: { to: string; template: string }[];
  const mondayAt9: Date;
  const tuesdayAt9: Date;
  const tomorrowAt9: Date;
  const id: number;
  const jobId: number;
  const email: string;
  const lastIdOfPreviousPage: number;
  const request: Request;
  const app: import("express").Express;
  const honoApp: import("hono").Hono;
  const koaApp: InstanceType<typeof import("koa")>;
  function isAdmin(request: unknown): boolean;
  const fastify: import("fastify").FastifyInstance;
  const knex: import("knex").Knex;
  const stats: { timing(name: string, ms: number): void };
  const alerts: { notify(message: string, error?: unknown): void };
  const metrics: {
    increment(name: string, fields?: object): void;
    gauge(name: string, value: number, tags?: object): void;
    flush(): void;
  };
  const UnrecoverableError: typeof import("firm-queue").UnrecoverableError;
  const errorTracker: { capture(error: unknown, context?: object): void };
  const alerting: { notify(message: string, fields?: object): void; send(message: string): Promise<void> };
  const mailer: {
    send(to: string, template: string, options?: { signal?: AbortSignal }): Promise<void>;
    sendWelcome(userId: number, options?: { signal?: AbortSignal }): Promise<void>;
  };
  type Row = Record<string, unknown>;
  class SmtpClient { send(to: string, options?: { signal?: AbortSignal }): Promise<void>; }
  class ConfigService { get(key: string): string; getOrThrow(key: string): string; }
  class OrderCancelled extends Error {}
  class CardExpired extends Error {}
  // A handler of the application's, for blocks about a definition's options.
  function handler(args: { accountId: string }): Promise<void>;
  function chunks(file: string): string[];
  function importChunk(chunk: string, options?: { signal?: AbortSignal }): Promise<void>;
  function resizeImage(file: string, width?: number): Promise<{ width: number; height: number }>;
  function save(row: Row): Promise<void>;
  function chargeCard(args: unknown): Promise<void>;
  function isAccountClosed(error: unknown): boolean;
  function deliver(args: unknown): Promise<void>;
  function pullFromUpstream(args: unknown): Promise<void>;
  function signUp(userId: number): Promise<void>;
  const photos: string[];
  function makeThumbnail(photo: string): Promise<string>;
  function publishAlbum(album: string, thumbnails?: unknown[]): Promise<void>;
  function movePostings(args: unknown): Promise<void>;
  function rebundle(args: unknown): Promise<void>;
}
export {};
`;

/** Modules the blocks import that are not installed here, declared as far as the blocks use them. */
const AMBIENT_MODULES = `
declare module "@sentry/node" {
  export function startSpan<T>(options: { name: string; op?: string }, work: () => T): T;
  export function captureException(error: unknown, hint?: object): string;
  export function withScope<T>(work: (scope: { setTag(key: string, value: string): void }) => T): T;
}
`;

/** Blocks written as files (`// jobs/declarations.ts: …` on their first line) keep that path, so the docs' imports between them resolve. */
const NAMED = /^\/\/ ([\w./[\]-]+\.ts)\b/;

interface Snippet {
  readonly doc: string;
  readonly line: number;
  readonly file: string;
}

/**
 * Docs whose blocks do not compile yet, each for a reason to fix: listed here, in plain sight,
 * rather than skipped silently; an entry goes once its doc compiles.
 */
const NOT_YET: Record<string, string> = {};

function markdownFiles(): string[] {
  const docs = readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md") && NOT_YET[join("docs", name)] === undefined)
    .map((name) => join("docs", name));
  return ["README.md", ...docs];
}

/** Files the blocks import that no block is: the application's own modules. */
const APP_MODULES: Record<string, string> = {
  "docs_observability_md/jobs.ts": 'import { FirmQueue } from "firm-queue";\nexport const firm = new FirmQueue({});\n',
  "docs_jobs_md/mailer.ts":
    "export const mailer = { async send(_to: string, _template: string, _options?: { signal?: AbortSignal }) {} };\n",
};

/** Each ```ts block of each doc as a module of its own under `out/<doc>/`. */
function writeSnippets(out: string): Snippet[] {
  const snippets: Snippet[] = [];
  for (const doc of markdownFiles()) {
    const lines = readFileSync(join(ROOT, doc), "utf8").split("\n");
    const folder = join(out, doc.replace(/\W/g, "_"));
    for (let index = 0; index < lines.length; index++) {
      if (!/^```(?:ts|typescript)\s*$/.test(lines[index]!)) continue;
      const start = index + 1;
      let end = start;
      while (end < lines.length && !/^```\s*$/.test(lines[end]!)) end++;
      const body = lines.slice(start, end);
      const named = NAMED.exec(body[0] ?? "");
      const file = join(folder, named ? named[1]! : `block-${start + 1}.ts`);
      mkdirSync(dirname(file), { recursive: true });
      // A module of its own (top-level await, no clash between blocks' names).
      writeFileSync(file, `${body.join("\n")}\nexport {};\n`);
      snippets.push({ doc, line: start + 1, file });
      index = end;
    }
  }
  return snippets;
}

// Inside the repository, so `firm-queue` resolves to this package (its exports, dist/) and the
// docs' other imports to its node_modules.
const out = join(ROOT, ".tmp", "docs-snippets");
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe("the docs' TypeScript", () => {
  it("every block compiles under strict, exactOptionalPropertyTypes and nodenext", () => {
    rmSync(out, { recursive: true, force: true });
    mkdirSync(out, { recursive: true });
    const snippets = writeSnippets(out);
    writeFileSync(join(out, "context.d.ts"), CONTEXT);
    writeFileSync(join(out, "modules.d.ts"), AMBIENT_MODULES);
    for (const [file, text] of Object.entries(APP_MODULES)) writeFileSync(join(out, file), text);
    // The scan finds the blocks: the README and these guides have several each.
    for (const doc of ["README.md", "docs/jobs.md", "docs/integration.md"]) {
      expect(snippets.filter((snippet) => snippet.doc === doc).length, doc).toBeGreaterThan(2);
    }
    const program = ts.createProgram(
      [join(out, "context.d.ts"), join(out, "modules.d.ts"), ...snippets.map((snippet) => snippet.file)],
      {
        strict: true,
        exactOptionalPropertyTypes: true,
        noUncheckedIndexedAccess: true,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        target: ts.ScriptTarget.ES2022,
        lib: ["lib.es2023.d.ts", "lib.dom.d.ts"],
        types: ["node"],
        // The NestJS example uses Nest's decorators (legacy ones, as Nest requires).
        experimentalDecorators: true,
        emitDecoratorMetadata: true,
        skipLibCheck: true,
        noEmit: true,
      },
    );
    const where = new Map(snippets.map((snippet) => [snippet.file, snippet]));
    const errors = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
      const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
      if (diagnostic.file === undefined) return message;
      const snippet = where.get(diagnostic.file.fileName);
      const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
      const place = snippet ? `${snippet.doc}:${snippet.line + line}` : relative(ROOT, diagnostic.file.fileName);
      return `${place}: ${message}`;
    });
    expect(errors).toEqual([]);
  }, 120_000);

  it("the docs listed as not compiling yet still exist and have TypeScript blocks", () => {
    for (const doc of Object.keys(NOT_YET)) {
      expect(readFileSync(join(ROOT, doc), "utf8"), doc).toMatch(/^```ts$/m);
    }
  });
});
