import { describe, expect, test } from "vitest";
import { scheduleInWords } from "../src/dashboard/cron-words.js";
import { prettyValue, shortValue } from "../src/dashboard/format.js";
import { escapeHtml, html, SafeHtml } from "../src/dashboard/html.js";
import { decodeCursor, encodeCursor, InvalidCursorError } from "../src/models/job-cursor.js";

describe("dashboard formatting", () => {
  test("html escapes every interpolated value unless it is already markup", () => {
    const name = `<img src=x onerror="alert(1)">'\``;
    expect(html`<td title="${name}">${name}</td>`.value).toBe(
      '<td title="&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&#39;&#96;">&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&#39;&#96;</td>',
    );
    expect(html`<p>${html`<b>${"&"}</b>`}${[1, "<", null, undefined, false]}</p>`.value).toBe(
      "<p><b>&amp;</b>1&lt;</p>",
    );
    expect(escapeHtml("</script>")).toBe("&lt;/script&gt;");
    expect(new SafeHtml("<i>").toString()).toBe("<i>");
  });

  test("arguments print with Date and bigint as such", () => {
    expect(prettyValue({ at: new Date("2026-01-02T03:04:05Z"), n: 10n, list: [1, "two", null], nested: {} })).toBe(
      '{\n  "at": Date(2026-01-02T03:04:05.000Z),\n  "n": 10n,\n  "list": [\n    1,\n    "two",\n    null\n  ],\n  "nested": {}\n}',
    );
    expect(shortValue({ text: "x".repeat(200) }, 20)).toBe('{ "text": "xxxxxxxx…');
  });

  test("common cron shapes in words; anything else is left to the expression", () => {
    expect(scheduleInWords("* * * * *")).toBe("every minute");
    expect(scheduleInWords("*/5 * * * *")).toBe("every 5 minutes");
    expect(scheduleInWords("0 * * * *")).toBe("every hour, on the hour");
    expect(scheduleInWords("15 * * * *")).toBe("every hour at minute 15");
    expect(scheduleInWords("30 9 * * *")).toBe("every day at 09:30");
    expect(scheduleInWords("0 8 * * 1")).toBe("every Monday at 08:00");
    expect(scheduleInWords("0 8 * * 1-5")).toBe("every weekday at 08:00");
    expect(scheduleInWords("0 0 1 * *")).toBe("on day 1 of every month at 00:00");
    expect(scheduleInWords("@daily")).toBe("every day at midnight");
    expect(scheduleInWords("0 30 9 * * *")).toBe("every day at 09:30");
    expect(scheduleInWords("0 9 * 1 *")).toBeNull();
    expect(scheduleInWords("0 9,17 * * *")).toBeNull();
  });

  test("cursors round-trip and bad ones are refused", () => {
    const at = new Date("2026-12-01T10:00:00.123Z");
    expect(decodeCursor(encodeCursor({ id: 42, at }))).toEqual({ id: 42, at });
    expect(decodeCursor(encodeCursor({ id: 7 }))).toEqual({ id: 7 });
    for (const bad of [
      "",
      "x",
      Buffer.from("[0]").toString("base64url"),
      Buffer.from('["1"]').toString("base64url"),
      Buffer.from("[1,2,3]").toString("base64url"),
    ]) {
      expect(() => decodeCursor(bad), bad).toThrow(InvalidCursorError);
    }
  });
});
