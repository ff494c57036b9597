import { expect, test } from "vitest";
import { createDashboard } from "../src/index.js";
import { serveUnderPrefix } from "./support/dashboard.js";
import { describeEachDatabase } from "./support/harness.js";

/** A page's text without tags, spaces folded: what a reader sees. */
const textOf = (markup: string) =>
  markup
    .replace(/<[^>]+>/g, " ")
    .replace(/\s+/g, " ")
    .trim();

/** The markup after `opening` (an opening tag, or the part of it up to an id) up to the first `</tag>`. */
function section(page: string, opening: string, tag = "section"): string {
  const start = page.indexOf(opening);
  expect(start, opening).toBeGreaterThan(-1);
  const inner = page.indexOf(">", start + opening.length - 1) + 1;
  return page.slice(inner, page.indexOf(`</${tag}>`, inner));
}

describeEachDatabase("dashboard: dependencies and batches", (env) => {
  test("the job page links a job's dependencies and dependents with their states, says how many when capped, and links its batch", async () => {
    const firm = env.firm();
    const step = firm.defineJob("step", async () => {});
    const join = firm.defineJob("join", async () => {});
    const first = (await step.enqueue({ n: 1 })).id;
    const second = (await step.enqueue({ n: 2 }, { queue: "held" })).id;
    const joined = (await join.enqueue({}, { dependsOn: [first, second] })).id;
    // 101 more dependents of `first`: the page lists 100 of its 102.
    await join.enqueueAll(
      Array.from({ length: 101 }, (_, index) => ({ index })),
      { dependsOn: [first] },
    );
    await firm.drain({ queues: "default" });
    const batch = await firm.batch([{ name: "step", args: { n: 3 } }]);
    const served = await serveUnderPrefix(createDashboard({ firm, basePath: "/admin" }), "/admin");
    try {
      const page = await (await fetch(`${served.url}/admin/jobs/${joined}`)).text();
      const dependencies = section(page, 'id="job-dependencies"');
      expect(textOf(dependencies)).toBe(`Dependencies (2) #${first} step finished #${second} step ready`);
      expect(dependencies).toContain(`href="/admin/jobs/${first}"`);
      expect(dependencies).toContain(`href="/admin/jobs/${second}"`);
      expect(page).not.toContain('id="job-dependents"');

      const fanned = await (await fetch(`${served.url}/admin/jobs/${first}`)).text();
      const dependents = section(fanned, 'id="job-dependents"');
      expect(textOf(dependents)).toContain("Dependents (102) The first 100 of 102 jobs waiting for it.");
      expect(dependents).toContain(`href="/admin/jobs/${joined}"`);
      expect(dependents.match(/<li>/g)).toHaveLength(100);
      expect(dependents).toContain('<span class="state state-pending">pending</span>');

      const member = await (await fetch(`${served.url}/admin/jobs/${batch.jobs[0]!.id}`)).text();
      expect(member).toContain(
        `<dt>Batch</dt><dd><a href="/admin/batches/${batch.id}">#${batch.id}</a> <span class="state state-pending">pending</span>`,
      );
    } finally {
      await served.close();
    }
  });

  test("the Batches page lists batches with progress; a batch page shows counts, a progress bar, callbacks and its jobs page by page", async () => {
    const firm = env.firm();
    firm.defineJob("resize", async (args: { photo: number }) => {
      if (args.photo === 0) throw new Error("unreadable");
    });
    firm.defineJob("notify", async () => {});
    const small = await firm.batch(
      [0, 1, 2, 3].map((photo) => ({ name: "resize", args: { photo } })),
      { onFailure: { name: "notify", args: { album: "<b>summer</b>" } } },
    );
    await firm.drain();
    const big = await firm.batch(
      Array.from({ length: 55 }, (_, photo) => ({ name: "resize", args: { photo: photo + 10 } })),
      { onFinish: { name: "notify", args: { album: "winter" } } },
    );
    const served = await serveUnderPrefix(createDashboard({ firm, basePath: "/admin" }), "/admin");
    try {
      const overview = await (await fetch(`${served.url}/admin/`)).text();
      expect(overview).toContain('<a href="/admin/batches">Batches</a>');
      const list = await fetch(`${served.url}/admin/batches`);
      expect(list.status).toBe(200);
      const listed = await list.text();
      const rows = [...listed.matchAll(/<tr>\s*<th scope="row">([\s\S]*?)<\/tr>/g)].map((match) => match[1]!);
      expect(rows.map((row) => textOf(row).replace(/ \d+ \w+ ago/g, " ago"))).toEqual([
        `#${big.id} pending 0 of 55 ended: 0 finished, 0 failed, 0 cancelled 55 55 0 0 0 ago —`,
        `#${small.id} failed 4 of 4 ended: 3 finished, 1 failed, 0 cancelled 4 0 3 1 0 ago ago`,
      ]);
      expect(rows[0]).toContain(`href="/admin/batches/${big.id}"`);
      // The bar of the ended batch: 3 of 4 finished from the left, then 1 failed.
      expect(rows[1]).toContain('aria-label="4 of 4 ended: 3 finished, 1 failed, 0 cancelled"');
      expect(rows[1]).toContain('<rect class="bar-finished" x="0.00" y="0" width="75.00" height="10">');
      expect(rows[1]).toContain('<rect class="bar-failed" x="75.00" y="0" width="25.00" height="10">');

      const detail = await (await fetch(`${served.url}/admin/batches/${small.id}`)).text();
      expect(textOf(section(detail, '<dl class="facts">', "dl"))).toMatch(
        /^State failed Jobs 4 Pending 0 Finished 3 Failed 1 Cancelled 0 Created .+ UTC Ended .+ UTC$/,
      );
      expect(detail).toContain("4 of 4 jobs ended (100%).");
      expect(textOf(section(detail, '<table class="callbacks">', "table"))).toBe(
        "Callback When Job Queue Arguments onFailure a job failed for good notify default { &quot;album&quot;: &quot;&lt;b&gt;summer&lt;/b&gt;&quot; }",
      );
      expect(detail).not.toContain("<b>summer");
      for (const job of small.jobs) expect(detail).toContain(`href="/admin/jobs/${job.id}"`);
      expect(textOf(section(section(detail, '<table class="batch-jobs">', "table"), "<tbody>", "tbody"))).toBe(
        `#${small.jobs[0]!.id} resize failed failed #${small.jobs[1]!.id} resize finished finished #${small.jobs[2]!.id} resize finished finished #${small.jobs[3]!.id} resize finished finished`,
      );

      const firstPage = await (await fetch(`${served.url}/admin/batches/${big.id}`)).text();
      expect(firstPage).toContain("0 of 55 jobs ended (0%).");
      expect(firstPage.match(/<tr>\s*<td><a href="\/admin\/jobs\//g)).toHaveLength(50);
      const next = /<a rel="next" href="([^"]+)">More jobs/.exec(firstPage)?.[1];
      expect(next).toBeDefined();
      const secondPage = await (await fetch(`${served.url}${next!.replaceAll("&amp;", "&")}`)).text();
      expect(secondPage.match(/<tr>\s*<td><a href="\/admin\/jobs\//g)).toHaveLength(5);
      expect(secondPage).toContain(`href="/admin/jobs/${big.jobs[54]!.id}"`);
      expect(secondPage).not.toContain('rel="next"');
    } finally {
      await served.close();
    }
  });

  test("bad batch ids and cursors are 4xx pages, never 5xx", async () => {
    const firm = env.firm();
    firm.defineJob("resize", async () => {});
    const batch = await firm.batch([{ name: "resize", args: {} }]);
    const served = await serveUnderPrefix(createDashboard({ firm, basePath: "/q" }), "/q");
    try {
      for (const [path, status] of [
        ["/batches/abc", 400],
        ["/batches/0", 400],
        ["/batches/-1", 400],
        ["/batches/1.5", 400],
        ["/batches/99999999999999999999", 400],
        ["/batches/%zz", 400],
        ["/batches/%00", 400],
        ["/batches/123456789", 404],
        [`/batches/${batch.id}?cursor=bad`, 400],
        [`/batches/${batch.id}?cursor=WzBd`, 400],
        ["/batches?cursor=bad", 400],
        ["/batches?cursor=%00", 400],
        ["/batches?cursor=WzEsOTAwNzE5OTI1NDc0MDk5MV0", 400],
        ["/batches?cursor=WzFd", 200],
        [`/batches/${batch.id}?cursor=&x=%E0%A4%A`, 200],
      ] as const) {
        const response = await fetch(`${served.url}/q${path}`);
        expect(response.status, path).toBe(status);
      }
    } finally {
      await served.close();
    }
  });
});
