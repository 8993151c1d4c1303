import { closeSync, fstatSync, openSync, statSync, writeSync } from 'node:fs';
import { isErrno } from '../errors.js';

/**
 * Writes a command's output straight to descriptor 1. `process.stdout` loads Node's stream
 * machinery (~5 ms), a seventh of a `flotilla send` (§14); the fast commands write through
 * this instead and never touch it. A reader that has gone (`flotilla status | head`) ends the
 * process quietly; a closed tmux window (EIO) loses the text, as it would on a stream; a
 * non-blocking descriptor that is full gets the rest through process.stdout.
 */
export function writeOut(text: string): void {
  const buf = Buffer.from(text);
  let off = 0;
  try {
    while (off < buf.length) off += writeSync(1, buf, off);
  } catch (err) {
    if (isErrno(err, 'EAGAIN')) guardStdout().write(buf.subarray(off));
    else if (isErrno(err, 'EPIPE')) process.exit(0);
    else if (!isErrno(err, 'EIO')) throw err;
  }
}

/**
 * process.stdout, with the errors that are not errors handled: a reader that has gone
 * (`flotilla agents | head`) ends the process quietly, and a closed tmux window (EIO) must not
 * stop a harness finishing its shutdown. Once per process.
 */
export function guardStdout(): NodeJS.WriteStream {
  if (!stdoutGuarded) {
    stdoutGuarded = true;
    process.stdout.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(0);
      if (err.code === 'EIO') return;
      throw err;
    });
  }
  return process.stdout;
}
let stdoutGuarded = false;

/**
 * process.stderr, with a reader that has gone or a closed window not an error: a warning that
 * cannot be shown must not end the command that writes it (a spawn detached from the shell
 * that started it still spawns). Once per process.
 */
export function guardStderr(): void {
  if (stderrGuarded) return;
  stderrGuarded = true;
  process.stderr.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE' || err.code === 'EIO') return;
    throw err;
  });
}
let stderrGuarded = false;

/** The terminal's width when stdout is one, without loading streams when it is a pipe, a file or /dev/null. */
export function terminalColumns(): number | undefined {
  return onDevice(1) && process.stdout.isTTY ? process.stdout.columns : undefined;
}

/** /dev/null's device number, looked up once: every command asks of three descriptors at its start. */
let devNull: number | undefined;

/** Whether a descriptor is a device other than /dev/null (a terminal, most likely), without loading streams. */
function onDevice(fd: number): boolean {
  try {
    const st = fstatSync(fd);
    return st.isCharacterDevice() && st.rdev !== (devNull ??= statSync('/dev/null').rdev);
  } catch {
    return false;
  }
}

/**
 * Lets a process whose terminal has gone (its tmux window closed, its tmux server killed) end
 * with its own exit status. Node 20 resets, as it exits, each of descriptors 0–2 that was a
 * terminal at its start, and aborts when the terminal refuses (EIO; later Nodes ignore it,
 * nodejs/node#58200): SIGABRT, or SIGSEGV when its crash report crashes in turn (a core dump, a
 * "segfault … in libgcc_s" line in the kernel's log), where a harness ended by its closed window
 * exits 1. Such a descriptor is pointed at /dev/null first: Node leaves alone one that is no
 * longer the file it started with. Its cost before the exit: an fstat of each of 0–2.
 */
export function releaseLostTerminalAtExit(): void {
  const devices = [0, 1, 2].filter(onDevice);
  if (devices.length === 0) return;
  process.once('exit', () => {
    // Loaded only now: node:tty loads node:net (~3 ms), and a live terminal costs nothing here.
    const { isatty } = process.getBuiltinModule('node:tty');
    for (const fd of devices) {
      if (isatty(fd)) continue;
      try {
        closeSync(fd);
        // The lowest free descriptor: this one, as 0–2 are taken in order.
        openSync('/dev/null', 'r+');
      } catch {
        // Closed or not, Node finds no terminal of its start there to reset.
      }
    }
  });
}

/** Prints data as one JSON document on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}
