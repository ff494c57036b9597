import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Picks the databases under test and starts throwaway servers for them.
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 30_000,
    // Creating and dropping databases in hooks can take a while on a busy machine.
    hookTimeout: 60_000,
    // Child processes, not threads: native drivers (better-sqlite3) and
    // per-file process state stay isolated.
    pool: "forks",
  },
});
