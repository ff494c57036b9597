import { defineConfig } from "vitest/config";

// The smoke suite on other runtimes (test/runtimes/): Node 22 and 24, Bun. Not part of `npm test`;
// .ci/run runs it after the whole suite, and so can anyone:
//   npx vitest run --config vitest.runtimes.config.ts
// FIRM_QUEUE_TEST_RUNTIMES narrows it (e.g. bun); FIRM_QUEUE_TEST_DIALECTS works as in the suite.
export default defineConfig({
  test: {
    include: ["test/runtimes/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    pool: "forks",
  },
});
