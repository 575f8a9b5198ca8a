// JSON Pointer escaping (RFC 6901) as every level and the registry's config errors use it.
import { describe, expect, it } from "vitest";
import { escapeSegment, splitPointer, toPointer, unescapeSegment } from "../src/json-pointer.js";

describe("JSON pointer", () => {
  it.each([
    ["plain", "plain"],
    ["", ""],
    ["a/b", "a~1b"],
    ["m~n", "m~0n"],
    // `~1` as a key is `~01`, not `/`: the tilde is escaped first and unescaped last.
    ["~1", "~01"],
    ["/~/", "~1~0~1"],
    ["é😀 key", "é😀 key"],
  ])("escapes %j as %j and back", (key, token) => {
    expect(escapeSegment(key)).toBe(token);
    expect(unescapeSegment(token)).toBe(key);
  });

  it.each<[string[], string]>([
    [[], ""],
    [[""], "/"],
    [["spec", "env", "0", "name"], "/spec/env/0/name"],
    [["metadata", "annotations", "example.com/owner"], "/metadata/annotations/example.com~1owner"],
    [["a", "", "b"], "/a//b"],
  ])("writes %j as %j and splits it back", (path, pointer) => {
    expect(toPointer(path)).toBe(pointer);
    expect(splitPointer(pointer)).toEqual(path);
  });
});
