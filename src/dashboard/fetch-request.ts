import type { CoreRequest } from "./core-request.js";
import { parseHost } from "./host-check.js";
import { PageError } from "./pages/page-error.js";
import { checkFormType, MAX_FORM_BYTES } from "./request-form.js";

/**
 * The dashboard's view of a Fetch `Request`, or null when its Host cannot be parsed. The runtime
 * has parsed the URL already; the host is the Host header when the runtime passes it on, else
 * the URL's.
 */
export function fromFetch(request: Request): CoreRequest | null {
  const given = request.headers.get("host");
  const host = parseHost(given ?? new URL(request.url).host);
  if (!host) return null;
  return {
    method: request.method,
    url: request.url,
    host,
    header: (name) => request.headers.get(name) ?? undefined,
    raw: request,
    loopback: null,
    readForm: async () => {
      checkFormType(request.headers.get("content-type"));
      const text = await request.text();
      if (Buffer.byteLength(text) > MAX_FORM_BYTES) throw new PageError(413, "The form is too large.");
      return new URLSearchParams(text);
    },
  };
}
