import type { DynamicModule, Provider } from "@nestjs/common";
import { DiscoveryModule, DiscoveryService, HttpAdapterHost, MetadataScanner, Reflector } from "@nestjs/core";
import { FirmQueueLifecycle } from "./lifecycle.js";
import {
  resolveModuleOptions,
  type FirmQueueModuleAsyncOptions,
  type FirmQueueModuleOptions,
  type ResolvedModuleOptions,
} from "./module-options.js";
import { FIRM_QUEUE, FIRM_QUEUE_MODULE_OPTIONS } from "./tokens.js";

/**
 * firm-queue as a NestJS module: the FirmQueue injectable with `@InjectFirmQueue()`, job handlers
 * on provider methods with `@JobHandler(…)`, workers and the dashboard tied to the application's
 * lifecycle. Import it once, in the root module:
 *
 * ```ts
 * @Module({ imports: [FirmQueueModule.forRoot({ options: { databaseUrl: process.env.DATABASE_URL }, workers: true })] })
 * export class AppModule {}
 * ```
 */
// biome-ignore lint/complexity/noStaticOnlyClass: Nest modules are classes, configured through static forRoot methods
export class FirmQueueModule {
  /** The module with options known up front. */
  static forRoot(options: FirmQueueModuleOptions): DynamicModule {
    return FirmQueueModule.build(
      { provide: FIRM_QUEUE_MODULE_OPTIONS, useFactory: () => resolveModuleOptions(options) },
      [],
      options.global,
    );
  }

  /** The module with options from a factory, which may inject providers (a ConfigService, say) and be async. */
  static forRootAsync(options: FirmQueueModuleAsyncOptions): DynamicModule {
    return FirmQueueModule.build(
      {
        provide: FIRM_QUEUE_MODULE_OPTIONS,
        useFactory: async (...dependencies: unknown[]) =>
          resolveModuleOptions(await options.useFactory(...dependencies)),
        inject: options.inject ?? [],
      },
      options.imports ?? [],
      options.global,
    );
  }

  private static build(
    optionsProvider: Provider,
    imports: NonNullable<DynamicModule["imports"]>,
    global: boolean | undefined,
  ): DynamicModule {
    // Factories with explicit `inject` lists: firm-queue's own classes need no decorators or
    // emitted type metadata, so the package is built without either.
    const providers: Provider[] = [
      optionsProvider,
      {
        provide: FIRM_QUEUE,
        useFactory: (resolved: ResolvedModuleOptions) => resolved.firm,
        inject: [FIRM_QUEUE_MODULE_OPTIONS],
      },
      {
        provide: FirmQueueLifecycle,
        useFactory: (
          resolved: ResolvedModuleOptions,
          discovery: DiscoveryService,
          scanner: MetadataScanner,
          reflector: Reflector,
          adapterHost: HttpAdapterHost | undefined,
        ) => new FirmQueueLifecycle(resolved, { discovery, scanner, reflector }, adapterHost),
        inject: [
          FIRM_QUEUE_MODULE_OPTIONS,
          DiscoveryService,
          MetadataScanner,
          Reflector,
          { token: HttpAdapterHost, optional: true },
        ],
      },
    ];
    return {
      module: FirmQueueModule,
      global: global ?? true,
      imports: [DiscoveryModule, ...imports],
      providers,
      exports: [FIRM_QUEUE],
    };
  }
}
