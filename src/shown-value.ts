/**
 * A value as an error message shows it: JSON where JSON can show it, else a short description.
 * Never throws, whatever the value (a bigint, a cycle, a revoked proxy, a throwing getter or
 * `toJSON`), so that a check refusing bad input always gets as far as its named error; long
 * values are cut short, so that a huge bad value does not make a huge message.
 */
export function shown(value: unknown): string {
  const text = attempt(() => JSON.stringify(value)) ?? fallback(value);
  return text.length > MAX_LENGTH ? `${text.slice(0, MAX_LENGTH)}… (${text.length} characters)` : text;
}

const MAX_LENGTH = 200;

function attempt(show: () => string | undefined): string | undefined {
  try {
    return show();
  } catch {
    return undefined;
  }
}

function fallback(value: unknown): string {
  switch (typeof value) {
    case "bigint":
      return `${value}n`;
    case "undefined":
      return "undefined";
    case "function":
      return "a function";
    case "symbol":
      return attempt(() => value.toString()) ?? "a symbol";
  }
  return attempt(() => `an object (${Object.prototype.toString.call(value)})`) ?? "an object that cannot be shown";
}
