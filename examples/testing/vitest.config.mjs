// Runs this folder's vitest example on its own: npx vitest run --config examples/testing/vitest.config.mjs
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: { include: ["examples/testing/*.vitest.test.mjs"], root: new URL("../..", import.meta.url).pathname },
});
