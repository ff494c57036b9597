import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The other runtimes' smoke suite has a config of its own (vitest.runtimes.config.ts).
    exclude: [...configDefaults.exclude, "test/runtimes/**"],
    // Picks the databases under test and starts throwaway servers for them.
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 30_000,
    // Creating and dropping databases in hooks can take a while on a busy machine.
    hookTimeout: 60_000,
    // Child processes, not threads: native drivers (better-sqlite3) and
    // per-file process state stay isolated.
    pool: "forks",
    // Type tests (test/**/*.test-d.ts, expectTypeOf and @ts-expect-error) run with the suite and
    // fail it on a type error, such as a wrong argument type that compiles.
    typecheck: { enabled: true, include: ["test/**/*.test-d.ts"], tsconfig: "./tsconfig.json" },
  },
});
