import { describe, expect, it } from "vitest";
import { SerializationError } from "../src/errors.js";
import { deserializeArguments, serializeArguments } from "../src/serialization.js";

const roundTrip = (value: unknown) => deserializeArguments(serializeArguments("job", value));

describe("job argument serialization", () => {
  it("round-trips plain JSON values unchanged", () => {
    const value = {
      text: "hé",
      n: 1.5,
      ok: true,
      none: null,
      list: [1, "two", { three: 3 }],
      nested: { deep: { deeper: [] } },
    };
    expect(roundTrip(value)).toEqual(value);
    expect(roundTrip("just a string")).toBe("just a string");
    expect(roundTrip(42)).toBe(42);
  });

  it("writes plain JSON as JSON.stringify does, and everything else the long way, at any depth", () => {
    const nested = (depth: number, leaf: unknown): unknown => (depth === 0 ? leaf : { d: [nested(depth - 1, leaf)] });
    const bare = Object.create(null) as Record<string, unknown>;
    bare.x = 1;
    const withProto = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as unknown;
    for (const value of [
      { a: 1, b: [true, null, "x"], c: { e: -0.5 } },
      nested(20, 1),
      nested(40, "x"),
      bare,
      withProto,
    ]) {
      expect(serializeArguments("job", value)).toBe(JSON.stringify(value));
      expect(roundTrip(value)).toEqual(JSON.parse(JSON.stringify(value)));
    }
    expect(Object.getPrototypeOf(roundTrip(withProto))).toBe(Object.prototype);
    // Deeper than the plain check goes, holes, a tag key or a Date deep down: tagged or refused as before.
    expect(roundTrip(nested(100, 1))).toEqual(nested(100, 1));
    const holey: number[] = [];
    holey[0] = 1;
    holey[2] = 3;
    expect(serializeArguments("job", holey)).toBe("[1,null,3]");
    expect(roundTrip(nested(30, { $firm: "date", v: "x" }))).toEqual(nested(30, { $firm: "date", v: "x" }));
    expect(roundTrip(nested(30, new Date(5)))).toEqual(nested(30, new Date(5)));
    expect(roundTrip(nested(30, 7n))).toEqual(nested(30, 7n));
    expect(() => serializeArguments("job", nested(30, Number.NaN))).toThrow(/arguments(\.d\[0\]){30} is NaN/);
    expect(() => serializeArguments("job", { toJSON: () => "x" })).toThrow("arguments.toJSON is a function");
    expect(serializeArguments("job", { list: class List extends Array {}.from([1, 2]) })).toBe('{"list":[1,2]}');
  });

  it("round-trips Date and bigint, at any depth", () => {
    const when = new Date("2026-03-29T01:30:00.123Z");
    const value = { when, big: 2n ** 70n, list: [new Date(0), -5n] };
    const back = roundTrip(value) as typeof value;
    expect(back.when).toBeInstanceOf(Date);
    expect(back.when.getTime()).toBe(when.getTime());
    expect(back.big).toBe(2n ** 70n);
    expect(back.list[0]).toEqual(new Date(0));
    expect(back.list[1]).toBe(-5n);
  });

  it("keeps a plain object that owns the tag key intact", () => {
    const value = { $firm: "date", v: "not a date" };
    expect(roundTrip(value)).toEqual(value);
    expect(roundTrip({ outer: { $firm: "bigint", v: "1" } })).toEqual({ outer: { $firm: "bigint", v: "1" } });
  });

  it("treats undefined arguments as null and drops undefined properties", () => {
    expect(roundTrip(undefined)).toBeNull();
    expect(roundTrip({ a: 1, b: undefined })).toEqual({ a: 1 });
  });

  it.each([
    ["a function", { f: () => 1 }, "arguments.f is a function"],
    ["a symbol", { s: Symbol("x") }, "arguments.s is a symbol"],
    ["a Map", { m: new Map() }, "arguments.m is a Map"],
    ["a class instance", { user: new (class User {})() }, "arguments.user is a User"],
    ["NaN", [1, Number.NaN], "arguments[1] is NaN"],
    ["Infinity", { x: Infinity }, "arguments.x is Infinity"],
    ["undefined in an array", [undefined], "arguments[0] is undefined"],
    ["an invalid Date", { d: new Date("nope") }, "arguments.d is an invalid Date"],
    ["symbol keys", { [Symbol("k")]: 1 }, "arguments has symbol keys"],
  ])("refuses %s with a message naming the path", (_label, value, message) => {
    expect(() => serializeArguments("job", value)).toThrow(SerializationError);
    expect(() => serializeArguments("job", value)).toThrow(message);
  });

  it("refuses cycles but accepts the same object twice side by side", () => {
    const cyclic: Record<string, unknown> = { name: "loop" };
    cyclic.self = cyclic;
    expect(() => serializeArguments("job", cyclic)).toThrow("arguments.self refers back to itself");
    const shared = { x: 1 };
    expect(roundTrip({ a: shared, b: shared })).toEqual({ a: { x: 1 }, b: { x: 1 } });
  });
});
