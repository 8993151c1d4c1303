import { Command, Option } from 'commander';
import type { CommandModule } from './registry.js';
import type { CommandSpec, Parsed } from './spec.js';
import { optionParts } from './spec.js';

/** A command file's commander command, whichever way the file declares it. */
export function commandOf(mod: CommandModule): Command {
  return 'command' in mod
    ? mod.command()
    : commandFromSpec(mod.spec, (parsed, self) => mod.run(parsed, self.optsWithGlobals()));
}

/** The commander command for a spec (spec.ts); its action gets what `parseBySpec` would give. */
export function commandFromSpec(spec: CommandSpec, action: (parsed: Parsed, cmd: Command) => Promise<void>): Command {
  const cmd = new Command(spec.name).description(spec.description);
  for (const alias of spec.aliases ?? []) cmd.alias(alias);
  for (const a of spec.args) cmd.argument(a.name, a.description);
  for (const o of spec.options) {
    const opt = new Option(o.flags, o.description);
    if (o.choices) opt.choices(o.choices);
    if (o.default !== undefined) opt.default(o.default);
    if (o.hidden) opt.hideHelp();
    cmd.addOption(opt);
  }
  return cmd.action(async (...given: unknown[]) => {
    // commander calls action(arg1, …, argN, opts, cmd).
    const self = given[given.length - 1] as Command;
    const raw = given[given.length - 2] as Record<string, string | boolean | undefined>;
    const opts: Parsed['opts'] = {};
    for (const o of spec.options) {
      const { key } = optionParts(o);
      if (raw[key] !== undefined) opts[key] = raw[key];
    }
    await action({ args: given.slice(0, spec.args.length) as Parsed['args'], opts }, self);
  });
}
