/**
 * A command's arguments and options, declared once. The full CLI turns a spec into a
 * commander command (from-spec.ts: help, suggestions, every error message); the fast path
 * (fast.ts) parses the same spec itself (strictLongOptions), so `flotilla send`, `status`
 * and `watch` run without loading commander at all (§14). The fast parse takes only
 * what it is sure of: anything it would have to guess at — help, an unknown option, a
 * value that is not one of the choices, a missing argument — goes to commander, which
 * stays the one judge of a command line's errors.
 */
export interface CommandSpec {
  name: string;
  aliases?: string[];
  description: string;
  /** In order; only the last may be variadic (`[text...]`). */
  args: ArgSpec[];
  options: OptionSpec[];
  /**
   * Runs on the fast path (fast.ts): main.ts sends this command's name and aliases to its own
   * CommonJS bundle, dist/cli/fast-<name>.js, which tools/build-cli.mjs builds from this flag
   * (§14). Default false: the full CLI runs it.
   */
  fast?: boolean;
  /**
   * Modules (paths under src/, e.g. `lifecycle/broadcast.ts`) the fast bundle leaves out: code
   * the command reaches only on a rarer path, which every call would otherwise read and load
   * (§14). Meeting one hands the whole command line to the full CLI (fast.ts), so the command
   * must meet each before it reads its input or writes anything. The build fails on a module
   * the bundle never imports, or imports other than with `import()`.
   */
  fastLeavesOut?: string[];
}

export interface ArgSpec {
  /** As commander writes it: `<to>`, `[text...]`. */
  name: string;
  description: string;
}

export interface OptionSpec {
  /** As commander writes it: `--json`, `--summary <text>`. Long options only. */
  flags: string;
  description: string;
  choices?: readonly string[];
  default?: string;
  hidden?: boolean;
}

/** What a command's action receives: its arguments in order (a variadic one as an array) and its options. */
export interface Parsed {
  args: (string | string[] | undefined)[];
  opts: Record<string, string | boolean | undefined>;
}

/** Options the program itself takes, before or after the command name (full.ts, and parseBySpec). */
export const GLOBAL_OPTIONS: OptionSpec[] = [
  { flags: '--root <dir>', description: 'fleet root (default: <git top-level>/.flotilla, or $FLOTILLA_ROOT)' },
];

/** `--reply-to <id>` → its long name, commander's key for it and whether it takes a value. */
export function optionParts(o: OptionSpec): { long: string; key: string; takesValue: boolean } {
  const m = /^--([a-z][a-z0-9-]*)(?:\s+<[^>]+>)?$/.exec(o.flags);
  if (!m) throw new Error(`spec: unsupported option flags '${o.flags}'`);
  const long = m[1]!;
  return { long, key: long.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase()), takesValue: o.flags.includes('<') };
}

/** `[text...]` → its shape. */
export function argParts(a: ArgSpec): { required: boolean; variadic: boolean } {
  return { required: a.name.startsWith('<'), variadic: a.name.includes('...') };
}

/**
 * Parses `args` (what follows the command name, global options included) by `spec`, or
 * returns null when commander should decide. Never throws.
 */
export function parseBySpec(
  spec: CommandSpec,
  args: string[],
): (Parsed & { globals: Record<string, string | undefined> }) | null {
  const takesValue = new Map<string, boolean>();
  for (const o of [...GLOBAL_OPTIONS, ...spec.options]) {
    const parts = optionParts(o);
    takesValue.set(parts.long, parts.takesValue);
  }
  const split = strictLongOptions(args, takesValue);
  if (!split) return null;
  const { values, positionals } = split;
  const opts: Parsed['opts'] = {};
  for (const o of spec.options) {
    const { long, key } = optionParts(o);
    const v = values.get(long);
    if (v === undefined) {
      if (o.default !== undefined) opts[key] = o.default;
      continue;
    }
    if (o.choices && (typeof v !== 'string' || !o.choices.includes(v))) return null;
    opts[key] = v;
  }
  const parsed: Parsed['args'] = [];
  let i = 0;
  for (const a of spec.args) {
    const { required, variadic } = argParts(a);
    if (variadic) {
      parsed.push(positionals.slice(i));
      i = positionals.length;
    } else {
      if (i >= positionals.length && required) return null;
      parsed.push(positionals[i++]);
    }
  }
  if (i < positionals.length) return null;
  const root = values.get('root');
  return { args: parsed, opts, globals: { root: typeof root === 'string' ? root : undefined } };
}

/**
 * Splits a command line into long options and positionals, as node's `parseArgs` does in
 * strict mode (a repeated option keeps its last value; everything after `--` is positional),
 * without loading it (~0.4 ms of every `flotilla send`, §14). Returns null where commander
 * should judge: a short option, an unknown option, a flag given a value, a value that is
 * missing or looks like an option.
 */
function strictLongOptions(
  args: readonly string[],
  takesValue: ReadonlyMap<string, boolean>,
): { values: Map<string, string | boolean>; positionals: string[] } | null {
  const values = new Map<string, string | boolean>();
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (!a.startsWith('-')) {
      positionals.push(a);
      continue;
    }
    if (!a.startsWith('--')) return null;
    const eq = a.indexOf('=');
    const long = a.slice(2, eq === -1 ? undefined : eq);
    const wantsValue = takesValue.get(long);
    if (wantsValue === undefined) return null;
    if (!wantsValue) {
      if (eq !== -1) return null;
      values.set(long, true);
    } else if (eq !== -1) values.set(long, a.slice(eq + 1));
    else {
      const next = args[i + 1];
      if (next === undefined || next.startsWith('-')) return null;
      values.set(long, next);
      i++;
    }
  }
  return { values, positionals };
}
