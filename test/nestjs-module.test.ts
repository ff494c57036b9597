import "reflect-metadata";
import { Injectable, Module } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { expect, it } from "vitest";
import { ConfigurationError, FirmQueue, silentLogger } from "../src/index.js";
import { FirmQueueModule, InjectFirmQueue, JobHandler } from "../src/nestjs/index.js";
import { resolveModuleOptions } from "../src/nestjs/module-options.js";
import { describeEachDatabase, waitFor } from "./support/harness.js";

// Decorators applied as plain calls, as TypeScript's experimentalDecorators output does: this
// file is compiled without Nest's decorator settings (examples/nestjs has them).

it("refuses bad module options with a ConfigurationError before anything connects", () => {
  const refuse = (options: object, message: RegExp) =>
    expect(() => resolveModuleOptions(options as never)).toThrow(message);
  refuse({ workers: { mode: "fork" } }, /mode "async"/);
  refuse({ wokers: true }, /Unknown FirmQueueModule option "wokers"/);
  refuse({ firm: new FirmQueue({ databaseUrl: "sqlite::memory:" }), options: {} }, /either firm .* or options/);
  refuse({ dashboard: { path: "jobs" } }, /dashboard.path must be a path starting with "\/"/);
  const declared = new FirmQueue({ databaseUrl: "sqlite::memory:" }).declareJob("declared");
  expect(() => JobHandler(declared, { queue: "x" })).toThrow(ConfigurationError);
});

describeEachDatabase("FirmQueueModule", (env) => {
  it("forRootAsync injects its factory's dependencies, implements a declared job with a provider method, and runs it while the app is up", async () => {
    const firm = new FirmQueue({ databaseUrl: env.url, logger: silentLogger });
    const greet = firm.declareJob<{ name: string }>("greet");

    class Greetings {
      readonly seen: string[] = [];
    }
    class Greeter {
      constructor(
        readonly greetings: Greetings,
        readonly queue: FirmQueue,
      ) {}
      async greet(args: { name: string }) {
        this.greetings.seen.push(`hello ${args.name}`);
      }
    }
    Injectable()(Greetings);
    Injectable()(Greeter);
    Reflect.defineMetadata("design:paramtypes", [Greetings, Object], Greeter);
    InjectFirmQueue()(Greeter, undefined, 1);
    const descriptor = Object.getOwnPropertyDescriptor(Greeter.prototype, "greet")!;
    JobHandler(greet)(Greeter.prototype, "greet", descriptor);

    class Settings {
      readonly url = env.url;
    }
    Injectable()(Settings);
    class SettingsModule {}
    Module({ providers: [Settings], exports: [Settings] })(SettingsModule);
    class AppModule {}
    Module({
      imports: [
        FirmQueueModule.forRootAsync({
          imports: [SettingsModule],
          inject: [Settings],
          useFactory: async (settings) => {
            expect((settings as Settings).url).toBe(env.url);
            return { firm, workers: { workers: [{ pollingInterval: "50ms" }] } };
          },
        }),
      ],
      providers: [Greetings, Greeter],
    })(AppModule);

    const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
    let id = 0;
    try {
      const greeter = app.get(Greeter);
      expect(greeter.queue).toBe(firm);
      id = (await greet.enqueue({ name: "Ada" })).id;
      await waitFor(async () => (await firm.getJob(id))?.state === "finished", 20_000, "the job to run");
      expect(app.get(Greetings).seen).toEqual(["hello Ada"]);
    } finally {
      await app.close();
    }
    // A FirmQueue the app passed in stays open: the module only stopped its workers.
    expect((await firm.getJob(id))?.state).toBe("finished");
    await firm.close();
  });
});
