import { FlotillaError, errorMessage } from './errors.js';

/** Prints an error as one line on stderr (plus the bracketed refusal line) and returns the exit code. */
export function reportError(err: unknown, write: (text: string) => void = (t) => void process.stderr.write(t)): number {
  if (err instanceof FlotillaError) {
    write(`flotilla: ${oneLine(err.message)}\n`);
    if (err.bracket) write(err.bracket + '\n');
    return err.exitCode;
  }
  const io = ioHint(err);
  if (io) {
    // The machine said no (a full disk, a read-only or failing device): data, not a bug.
    write(`flotilla: ${oneLine(errorMessage(err))} — ${io}\n`);
    return 1;
  }
  write(`flotilla: ${oneLine(errorMessage(err))} — this is a bug; please report it with 'flotilla doctor' output\n`);
  if (process.env.FLOTILLA_DEBUG && err instanceof Error && err.stack) write(err.stack + '\n');
  return 1;
}

const IO_HINTS: Record<string, string> = {
  ENOSPC: 'the disk is full: free space and try again',
  EDQUOT: 'the disk quota is used up: free space and try again',
  EIO: 'the device reported an I/O error: check the disk',
  EROFS: 'the file system is read-only: check the mount',
  EMFILE: 'too many open files: raise ulimit -n or close other programs',
  ENFILE: 'too many open files on this machine: close other programs',
};

function ioHint(err: unknown): string | undefined {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' ? IO_HINTS[code] : undefined;
}

function oneLine(s: string): string {
  return s.replace(/\s*\n\s*/g, ' ').trim();
}
