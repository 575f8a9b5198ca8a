/**
 * The one catalogue of error codes. Every domain error carries a stable `code` that callers can
 * switch on; HTTP problems and CLI messages are built from these entries. Codes never change
 * meaning; add new ones rather than reuse.
 */
export const ERROR_CODES = {
  // CLI and files
  ERR_USAGE: { status: 400, title: "Invalid command usage" },
  ERR_IO: { status: 500, title: "File could not be read or written" },
  // Schemas
  ERR_SCHEMA_LOAD: { status: 500, title: "Schema could not be loaded" },
  ERR_CEL_COMPILE: { status: 500, title: "CEL rule does not compile" },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export class McpfleetError extends Error {
  readonly code: ErrorCode;
  readonly status: number;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "McpfleetError";
    this.code = code;
    this.status = ERROR_CODES[code].status;
  }
}

export function isMcpfleetError(err: unknown): err is McpfleetError {
  return err instanceof McpfleetError;
}
