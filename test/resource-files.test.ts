import { describe, expect, it } from "vitest";
import { MAX_RESOURCE_FILE_BYTES } from "../src/resource-files.js";
import { DEFAULT_OPTIONS } from "../src/validate/types.js";

describe("MAX_RESOURCE_FILE_BYTES", () => {
  it("is validate's default file size limit, which a Git tree is read with too", () => {
    expect(DEFAULT_OPTIONS.maxFileBytes).toBe(MAX_RESOURCE_FILE_BYTES);
  });
});
