/**
 * Quoting for the one place tmux takes a command *string* rather than an argv: hooks. A
 * hook value is parsed by tmux's command parser, then `run-shell` expands `#{formats}` in
 * it and hands the result to `sh -c`. So each argument is sh-quoted, every literal `#` is
 * doubled so format expansion leaves it alone, and the whole is put in a tmux double-quoted
 * string with `\`, `"` and `$` escaped so tmux's parser leaves it alone too.
 */

/** A tmux format inserted into a hook command, expanded by tmux when the hook runs (e.g. the dead pane's id). */
export interface TmuxFormat {
  readonly format: string;
}

/** `tmuxFormat('pane_id')` → `#{pane_id}`, expanded when the hook runs. */
export function tmuxFormat(variable: string): TmuxFormat {
  return { format: `#{${variable}}` };
}

/** POSIX sh quoting of one word: bare when plainly safe, else single-quoted. */
export function shellQuote(arg: string): string {
  if (/^[A-Za-z0-9_/.,:=@%+-]+$/.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** An argv as one sh command line; each word quoted. */
export function shellCommand(argv: readonly string[]): string {
  return argv.map(shellQuote).join(' ');
}

/** Quotes a string as one tmux command-parser word (double quotes; `\`, `"`, `$` escaped). */
export function tmuxQuote(text: string): string {
  return `"${text.replace(/[\\"$]/g, (c) => `\\${c}`)}"`;
}

/**
 * A tmux command string that runs `argv` in the background through `run-shell -b`, for
 * `set-hook`. Formats are single-quoted for sh (the ids they expand to — `%3`, `@2`, `$1` —
 * hold no quotes); literal words are sh-quoted with `#` doubled.
 */
export function runShellCommand(argv: readonly (string | TmuxFormat)[]): string {
  const sh = argv.map((a) => (typeof a === 'string' ? shellQuote(a).replace(/#/g, '##') : `'${a.format}'`)).join(' ');
  return `run-shell -b ${tmuxQuote(sh)}`;
}
