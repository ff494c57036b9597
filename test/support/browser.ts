import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

/** Debian's Chromium, which CI installs (`.ci/run`); FIRM_QUEUE_CHROMIUM points elsewhere. */
export const CHROMIUM = process.env.FIRM_QUEUE_CHROMIUM ?? "/usr/bin/chromium";

const inCi = process.env.CI !== undefined && process.env.CI !== "false" && process.env.CI !== "0";

/**
 * Whether browser tests can run here. Without Chromium they are skipped with a loud warning;
 * with CI set that is an error instead, as for the database servers.
 */
export function browserAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (inCi)
    throw new Error(`Chromium is missing at ${CHROMIUM}: CI must run the browser tests (apt-get install chromium)`);
  console.warn(
    `\n[firm-queue] !!! browser tests SKIPPED: no Chromium at ${CHROMIUM} (apt-get install chromium, or set FIRM_QUEUE_CHROMIUM) !!!\n`,
  );
  return false;
}

/** Headless Chromium with a fresh profile, nothing fetched from the network but what a test opens. */
export async function launchChromium(): Promise<{ browser: BrowserContext; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), "firm-queue-chromium-"));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    viewport: { width: 1200, height: 800 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
  return {
    browser,
    close: async () => {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
