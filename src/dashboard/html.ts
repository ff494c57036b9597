/**
 * HTML built from template literals where every interpolated value is escaped unless it is
 * already {@link SafeHtml}. Job names, arguments and errors are untrusted: building pages only
 * through `html` means none of them can become markup.
 */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
  "`": "&#96;",
};

/** Text as HTML text or attribute value (quotes, backticks and ampersands included). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (character) => ESCAPES[character]!);
}

/** A value interpolated into `html`: markup stays, arrays join, null/undefined/false vanish, the rest is escaped text. */
export type HtmlValue = SafeHtml | string | number | bigint | boolean | null | undefined | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return "";
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join("");
  return escapeHtml(String(value));
}

/** The tag: `html\`<td>${job.name}</td>\`` escapes `job.name`. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((value, index) => {
    out += render(value) + strings[index + 1]!;
  });
  return new SafeHtml(out);
}
