import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import fc from "fast-check";
import Fastify from "fastify";
import { Hono } from "hono";
import Koa from "koa";
import { expect, test } from "vitest";
import { createDashboard, type Dashboard, type FirmQueue, startDashboardServer } from "../src/index.js";
import { describeEachDatabase } from "./support/harness.js";
import {
  dashboardPath,
  extraHeaders,
  FUZZ_TIMEOUT_MS,
  fuzzParameters,
  hostHeader,
  rawRequestBytes,
} from "./support/hostile-requests.js";
import { leaksInternals, rawExchange, rawRequest } from "./support/raw-http.js";
import { capturingLogger } from "./support/recurring.js";

const PREFIX = "/admin/jobs";
const USER = { username: "ops", password: "a long password" };
const BASIC = `Basic ${Buffer.from(`${USER.username}:${USER.password}`).toString("base64")}`;

/** A server under fuzz: where it listens, the credentials it takes (if any), how to stop it. */
interface Target {
  readonly port: number;
  readonly authorization: string | null;
  close(): Promise<void>;
}

/**
 * Something to look at on every page: a failed job (its stored stack replaced, so a stack in a
 * response can only be a leak), a paused queue, and a batch whose failed job has a dependent (the
 * fuzzed paths name /batches/1 and other ids, this batch's among them when it is the first).
 */
async function seed(firm: FirmQueue): Promise<void> {
  const job = firm.defineJob("fuzzed", async () => {
    const error = new Error("expected failure");
    error.stack = "Error: expected failure";
    throw error;
  });
  await job.enqueue({ n: 1 }, { queue: "mail" });
  await job.enqueue({ n: 2 });
  const batch = await firm.batch([{ name: "fuzzed", args: { n: 3 } }], {
    onFinish: { name: "fuzzed", args: { n: 4 } },
  });
  await job.enqueue({ n: 5 }, { dependsOn: [batch.jobs[0]!.id!], onDependencyFailure: "run" });
  await firm.drain({ queues: "*" });
  await firm.queues.pause("paused");
}

/** The dashboard's error lines (the seeded jobs' failures are logged too, and are not its). */
const dashboardErrors = (logger: ReturnType<typeof capturingLogger>) =>
  logger.lines.filter((line) => line.level === "error" && line.message.startsWith("dashboard"));

async function listening(server: Server): Promise<number> {
  if (!server.listening) await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

function closing(server: Server): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
}

/** Each Node-side way of serving the dashboard, mounted as docs/dashboard.md shows. */
const NODE_TARGETS: Record<string, (firm: FirmQueue) => Promise<Target>> = {
  "plain http": async (firm) => {
    const dashboard = createDashboard({ firm, basePath: PREFIX });
    const server = createServer((request, response) => {
      if (request.url === PREFIX || request.url?.startsWith(`${PREFIX}/`) || request.url?.startsWith(`${PREFIX}?`))
        return dashboard.node(request, response);
      response.end("the application");
    });
    return { port: await listening(server), authorization: null, close: closing(server) };
  },
  "standalone, basic auth": async (firm) => {
    const server = await startDashboardServer({ firm, port: 0, basePath: PREFIX, basicAuth: USER });
    return { port: Number(new URL(server.url).port), authorization: BASIC, close: server.close };
  },
  Express: async (firm) => {
    const app = express();
    app.use(PREFIX, createDashboard({ firm, basePath: PREFIX }).node);
    app.get("/", (_request, response) => void response.send("the application"));
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    return { port: await listening(server), authorization: null, close: closing(server) };
  },
  "Fastify, basic auth": async (firm) => {
    const fastify = Fastify();
    const dashboard = createDashboard({ firm, basePath: PREFIX, basicAuth: USER });
    fastify.addHook("onRequest", (request, reply, done) => {
      if (request.url !== PREFIX && !request.url.startsWith(`${PREFIX}/`) && !request.url.startsWith(`${PREFIX}?`))
        return done();
      reply.hijack();
      dashboard.node(request.raw, reply.raw);
    });
    fastify.get("/", async () => "the application");
    await fastify.listen({ port: 0, host: "127.0.0.1" });
    const port = (fastify.server.address() as AddressInfo).port;
    return { port, authorization: BASIC, close: () => fastify.close() };
  },
  Koa: async (firm) => {
    const app = new Koa();
    const dashboard = createDashboard({ firm, basePath: PREFIX });
    app.use(async (ctx, next) => {
      if (ctx.path !== PREFIX && !ctx.path.startsWith(`${PREFIX}/`)) return next();
      ctx.respond = false;
      dashboard.node(ctx.req, ctx.res);
    });
    app.use((ctx) => {
      ctx.body = "the application";
    });
    const server = app.listen(0, "127.0.0.1");
    return { port: await listening(server), authorization: null, close: closing(server) };
  },
};

/** A Fetch request from fuzzed parts, or null when the Request constructor itself refuses them (no runtime would hand that over). */
function fetchRequest(
  path: string,
  host: string | null,
  headers: Record<string, string>,
  method: string,
): Request | null {
  try {
    return new Request(`http://localhost${path}`, {
      method,
      headers: { ...headers, ...(host === null ? {} : { host }) },
      ...(method === "POST" ? { body: "_csrf=x&ids=1" } : {}),
    });
  } catch {
    return null;
  }
}

/** What no answer may show: a 5xx, a stack trace or a path of this machine. */
function expectHarmless(status: number, text: string, request: string): void {
  expect(status, request).toBeLessThan(500);
  expect(leaksInternals(text), `${request}\n${text}`).toBe(false);
}

describeEachDatabase("dashboard under fuzzed requests", (env) => {
  for (const [name, start] of Object.entries(NODE_TARGETS)) {
    test(
      `${name}: malformed request lines, Host headers, paths and escapes get an answer below 500, without internals`,
      async () => {
        const logger = capturingLogger();
        const firm = env.firm({ logger });
        await seed(firm);
        const target = await start(firm);
        try {
          await fc.assert(
            fc.asyncProperty(rawRequestBytes(PREFIX, target.port, target.authorization), async (bytes) => {
              const answer = await rawExchange(target.port, bytes);
              expect(answer.timedOut, JSON.stringify(bytes)).toBe(false);
              expect(answer.status, JSON.stringify(bytes)).not.toBeNull();
              expectHarmless(answer.status!, answer.text, JSON.stringify(bytes));
            }),
            fuzzParameters(),
          );
          // Still serving.
          const headers: Record<string, string> = target.authorization ? { authorization: target.authorization } : {};
          expect((await rawRequest(target.port, { target: `${PREFIX}/failed`, headers })).status).toBe(200);
        } finally {
          await target.close();
        }
        expect(dashboardErrors(logger)).toEqual([]);
      },
      FUZZ_TIMEOUT_MS,
    );
  }

  test(
    "Fetch and Hono: fuzzed paths, escapes, cursors and Host headers get an answer below 500, without internals",
    async () => {
      const logger = capturingLogger();
      const firm = env.firm({ logger });
      await seed(firm);
      const token = "token-0123456789abcdef";
      const handlers: Record<string, { fetch: (request: Request) => Promise<Response>; authorization: string | null }> =
        {
          Fetch: {
            fetch: createDashboard({ firm, basePath: PREFIX, bearerToken: token }).fetch,
            authorization: `Bearer ${token}`,
          },
          Hono: {
            fetch: honoApp(createDashboard({ firm, basePath: PREFIX, allowUnauthenticated: true })),
            authorization: null,
          },
        };
      for (const [name, handler] of Object.entries(handlers)) {
        await fc.assert(
          fc.asyncProperty(
            dashboardPath(PREFIX),
            fc.option(hostHeader(80), { nil: null }),
            extraHeaders(handler.authorization),
            fc.oneof(
              { weight: 4, arbitrary: fc.constantFrom("GET", "HEAD", "POST") },
              { weight: 1, arbitrary: fc.constantFrom("PUT", "DELETE", "OPTIONS", "PATCH", "PURGE") },
            ),
            async (path, host, headers, method) => {
              const request = fetchRequest(path, host, headers, method);
              if (!request) return;
              const response = await handler.fetch(request);
              expectHarmless(response.status, await response.text(), `${name} ${method} ${path} Host ${host}`);
            },
          ),
          fuzzParameters(),
        );
      }
      expect(dashboardErrors(logger)).toEqual([]);
    },
    FUZZ_TIMEOUT_MS,
  );
});

/** A Hono app with the dashboard under PREFIX, as docs/dashboard.md mounts it. */
function honoApp(dashboard: Dashboard): (request: Request) => Promise<Response> {
  const app = new Hono();
  app.all(PREFIX, (context) => dashboard.fetch(context.req.raw));
  app.all(`${PREFIX}/*`, (context) => dashboard.fetch(context.req.raw));
  app.all("*", (context) => context.text("the application"));
  return async (request) => app.fetch(request);
}
