import { FlotillaError, errorMessage } from '../errors.js';

/** Prints data as one JSON document on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

/** Prints an error as one line on stderr (plus the bracketed refusal line) and returns the exit code. */
export function reportError(err: unknown): number {
  if (err instanceof FlotillaError) {
    process.stderr.write(`flotilla: ${oneLine(err.message)}\n`);
    if (err.bracket) process.stderr.write(err.bracket + '\n');
    return err.exitCode;
  }
  process.stderr.write(`flotilla: ${oneLine(errorMessage(err))} — this is a bug; please report it with 'flotilla doctor' output\n`);
  if (process.env.FLOTILLA_DEBUG && err instanceof Error && err.stack) process.stderr.write(err.stack + '\n');
  return 1;
}

function oneLine(s: string): string {
  return s.replace(/\s*\n\s*/g, ' ').trim();
}
