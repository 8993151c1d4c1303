/**
 * Errors a person or a model reads. Every message says what was wrong and what to do;
 * `code` is stable for programs, `exitCode` follows §2 (1 error, 2 usage), and `bracket`
 * is the machine-readable refusal line (`[flotilla:depth-limit depth=4 max=3]`).
 */
export class FlotillaError extends Error {
  readonly code: string;
  readonly exitCode: number;
  readonly bracket: string | undefined;

  constructor(message: string, opts: { code?: string; exitCode?: number; bracket?: string; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'FlotillaError';
    this.code = opts.code ?? 'error';
    this.exitCode = opts.exitCode ?? 1;
    this.bracket = opts.bracket;
  }
}

/** A mistake in how a command was called: exit code 2. */
export class UsageError extends FlotillaError {
  constructor(message: string, opts: { code?: string; cause?: unknown } = {}) {
    super(message, { code: opts.code ?? 'usage', exitCode: 2, cause: opts.cause });
    this.name = 'UsageError';
  }
}

/** Formats the bracketed refusal line: `[flotilla:depth-limit depth=4 max=3]`. */
export function bracketLine(kind: string, fields: Record<string, string | number> = {}): string {
  const parts = Object.entries(fields).map(([k, v]) => `${k}=${String(v).replace(/\s+/g, '_')}`);
  return `[flotilla:${[kind, ...parts].join(' ')}]`;
}

/** A refusal: a one-line reason plus its bracketed line (§2, §5). */
export function refusal(kind: string, message: string, fields: Record<string, string | number> = {}): FlotillaError {
  return new FlotillaError(message, { code: kind, bracket: bracketLine(kind, fields) });
}

/** The message of anything thrown, for logs and model-facing errors. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/** True for Node system errors with the given code (ENOENT, EEXIST, …). */
export function isErrno(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code;
}
