import { expect, it } from "vitest";
import { MissingDriverError } from "../src/index.js";
import { importDriver } from "../src/database/driver-import.js";

it("a driver that is not installed fails with an error naming the package and the install command", async () => {
  // A specifier built at run time, so neither TypeScript nor vite resolve it ahead of time.
  const name = ["firm-queue", "no-such-driver"].join("-");
  const loading = importDriver(name, "testing", () => import(name));
  await expect(loading).rejects.toThrow(MissingDriverError);
  await expect(loading).rejects.toThrow(
    `firm-queue needs the "${name}" package for testing; install it with: npm install ${name}`,
  );
});

it("a driver that is installed but fails to load shows its own error", async () => {
  const broken = Object.assign(new Error("Cannot find module 'some-native-binding'"), { code: "MODULE_NOT_FOUND" });
  await expect(importDriver("pg", "testing", () => Promise.reject(broken))).rejects.toBe(broken);
});

it("a driver that is installed loads", async () => {
  const pg = await importDriver("pg", "testing", () => import("pg"));
  expect(typeof pg.default.Pool).toBe("function");
});
