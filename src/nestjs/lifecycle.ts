import type { OnApplicationBootstrap, OnApplicationShutdown, OnModuleDestroy, OnModuleInit } from "@nestjs/common";
import type { HttpAdapterHost } from "@nestjs/core";
import { createDashboard } from "../dashboard/adapters.js";
import { ConfigurationError } from "../errors.js";
import type { Supervisor } from "../supervisor/supervisor.js";
import { attachJobHandlers, type ExplorerServices } from "./handler-explorer.js";
import type { ResolvedModuleOptions } from "./module-options.js";

/**
 * firm-queue in the application's lifecycle: the `@JobHandler` methods are attached and the
 * dashboard mounted when the module initializes, the workers start once the application has
 * bootstrapped (every provider ready) and stop first thing at shutdown, while the providers
 * their handlers use are still there; a FirmQueue the module made is closed last.
 */
export class FirmQueueLifecycle
  implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy, OnApplicationShutdown
{
  private supervisor: Supervisor | undefined;

  constructor(
    private readonly resolved: ResolvedModuleOptions,
    private readonly services: ExplorerServices,
    private readonly adapterHost: HttpAdapterHost | undefined,
  ) {}

  onModuleInit(): void {
    attachJobHandlers(this.resolved.firm, this.services);
    const dashboard = this.resolved.dashboard;
    if (dashboard === undefined) return;
    const adapter = this.adapterHost?.httpAdapter;
    if (!adapter)
      throw new ConfigurationError(
        "FirmQueueModule option dashboard needs an HTTP application (NestFactory.create), not an application context",
      );
    const { path, ...options } = dashboard;
    // Mounted on the HTTP server itself, ahead of Nest's not-found handler: the dashboard answers
    // every method under its path, and reads the path it was mounted at from the request.
    adapter.use(path, createDashboard({ ...options, firm: this.resolved.firm, basePath: path }).node);
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.resolved.workers === undefined) return;
    this.supervisor = await this.resolved.firm.start({ ...this.resolved.workers, mode: "async" });
  }

  async onModuleDestroy(): Promise<void> {
    const supervisor = this.supervisor;
    this.supervisor = undefined;
    await supervisor?.stop();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.resolved.owned) await this.resolved.firm.close();
  }
}
