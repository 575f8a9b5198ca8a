export {
  validatePaths,
  validateReadPaths,
  validateTexts,
  summarise,
  exitCode,
  assertValid,
} from "./validate.js";
export { formatReport, isFormat, issueLine, summaryLine, FORMATS, type Format } from "./format.js";
export * from "./types.js";
export { KeptByText } from "./kept-by-text.js";
export type { FileVerdict } from "./file-verdict.js";
