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

/** Formats a duration in ms compactly: 850ms, 12s, 3m04s, 2h05m. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}
