// The DurationString type and the run-time parser accept the same strings: generated strings
// are asked of both, TypeScript's checker (is the literal assignable to the exported type?) and
// toMilliseconds (does it parse?). Not a database test: no database is involved.
import { join } from "node:path";
import fc from "fast-check";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { isDuration, toMilliseconds } from "../src/duration.js";
import { ROOT } from "./support/processes.js";

/** The checker of a one-line program that names the exported type, and that type. */
function durationStringType(): { checker: ts.TypeChecker; target: ts.Type } {
  const file = join(ROOT, "test", "fixtures", "duration-string-type.ts");
  const program = ts.createProgram([file], {
    strict: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    noEmit: true,
    types: [],
  });
  const source = program.getSourceFile(file)!;
  const checker = program.getTypeChecker();
  const errors = ts.getPreEmitDiagnostics(program, source);
  expect(errors.map((error) => ts.flattenDiagnosticMessageText(error.messageText, "\n"))).toEqual([]);
  let target: ts.Type | undefined;
  source.forEachChild((node) => {
    if (ts.isTypeAliasDeclaration(node) && node.name.text === "Target") target = checker.getTypeAtLocation(node.name);
  });
  return { checker, target: target! };
}

const { checker, target } = durationStringType();
const typeAccepts = (text: string): boolean => checker.isTypeAssignableTo(checker.getStringLiteralType(text), target);
const parserAccepts = (text: string): boolean => {
  try {
    toMilliseconds(text, "x");
    return true;
  } catch (error) {
    // Too long is a range check, like a number's: the form was accepted.
    return error instanceof Error && / is too long /.test(error.message);
  }
};

/** Pieces numbers and their look-alikes are made of, so generated strings are often close to valid. */
const piece = fc.constantFrom(
  ..."0123456789".split(""),
  ".",
  "e",
  "E",
  "+",
  "-",
  "x",
  "X",
  "b",
  "o",
  "a",
  "f",
  "_",
  "n",
  " ",
  "\t",
  "\n",
  "\u00a0",
  "Infinity",
  "NaN",
  "ms",
  "s",
  "m",
  "h",
  "d",
  "minutes",
);
const near = fc
  .tuple(fc.array(piece, { maxLength: 8 }), fc.constantFrom("", "ms", "s", "m", "h", "d", " s", "sec"))
  .map(([parts, unit]) => parts.join("") + unit);

describe("DurationString and the parser", () => {
  it.each([
    ["5s", true],
    ["250ms", true],
    ["1.5m", true],
    ["2 d", true],
    ["1e3ms", true],
    ["0x10s", true],
    ["1.s", true],
    ["-1s", false],
    [" 1s", false],
    ["1s ", false],
    [".5s", false],
    ["+1s", false],
    ["Infinitys", false],
    ["NaNs", false],
    ["1_000ms", false],
    ["5 minutes", false],
    ["5", false],
    ["s", false],
  ])("%j: the type and the parser both say %s", (text, accepted) => {
    expect(typeAccepts(text)).toBe(accepted);
    expect(parserAccepts(text)).toBe(accepted);
    expect(isDuration(text)).toBe(accepted);
  });

  it("agree on generated strings", () => {
    fc.assert(
      fc.property(fc.oneof(near, fc.string({ maxLength: 6 })), (text) => {
        expect(typeAccepts(text), JSON.stringify(text)).toBe(parserAccepts(text));
        expect(isDuration(text)).toBe(parserAccepts(text));
      }),
      { numRuns: 3000 },
    );
  });

  it("read the number as Number() does", () => {
    expect(toMilliseconds("1e3ms", "x")).toBe(1000);
    expect(toMilliseconds("0x10s", "x")).toBe(16_000);
    expect(toMilliseconds("1.5 m", "x")).toBe(90_000);
  });
});
