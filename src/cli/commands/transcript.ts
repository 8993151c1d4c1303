import { Command, Option } from 'commander';
import { cliContext } from '../context.js';

interface TranscriptOpts {
  follow?: boolean;
  json?: boolean;
  chain?: boolean;
  lines?: number;
}

/** `flotilla transcript <id>` (§2, §8): pretty-print a transcript, or follow it live. */
export function command(): Command {
  return new Command('transcript')
    .description("pretty-print an agent's transcript: roles, tool calls, surfaced messages, human input")
    .argument('<id>', 'agent id or unique prefix')
    .option('-f, --follow', 'keep printing entries as they are appended, until the agent ends')
    .option('--json', 'print the raw records, one JSON object per line (header first)')
    .option('--chain', 'the whole resume chain through this agent, oldest first (each entry once)')
    .addOption(
      new Option('--lines <n>', 'lines of each tool result shown').argParser((v) => Number.parseInt(v, 10)).default(3),
    )
    .action(async (prefix: string, opts: TranscriptOpts, cmd: Command) => {
      const { layout } = cliContext(cmd, { createState: false });
      const [{ resolveKnownAgent }, { formatEntry }, { readTranscript }, { UsageError }] = await Promise.all([
        import('../../outputs/resolve.js'),
        import('../../transcript/format.js'),
        import('../../transcript/reader.js'),
        import('../../errors.js'),
      ]);
      if (opts.chain && opts.follow)
        throw new UsageError('--chain and --follow exclude each other — follow the newest agent of the chain alone');
      if (!Number.isInteger(opts.lines) || (opts.lines ?? 0) < 0)
        throw new UsageError(`--lines takes a whole number ≥ 0, got '${String(opts.lines)}'`);
      const id = resolveKnownAgent(layout, prefix);
      const fmt = { color: !!process.stdout.isTTY && !process.env.NO_COLOR, outputLines: opts.lines ?? 3 };
      const print = (r: Parameters<typeof formatEntry>[0]) =>
        process.stdout.write(opts.json ? JSON.stringify(r) + '\n' : formatEntry(r, fmt));

      // A vendor agent's turns are in its CLI's own session file (docs/runtimes.md, "Resume and transcript").
      const { readRecord } = await import('../../fleet/registry.js');
      let rec;
      try {
        rec = readRecord(layout, id);
      } catch {
        rec = undefined;
      } // a damaged record: our own transcript may still be there
      if (rec && rec.runtime !== 'flotilla') {
        const { printVendorTranscript } = await import('../../outputs/vendor-transcript.js');
        await printVendorTranscript(layout, rec, print, { follow: !!opts.follow, json: !!opts.json });
        return;
      }

      if (opts.chain) {
        const { resumeChain } = await import('../../outputs/chain.js');
        for (const link of resumeChain(layout, id)) {
          if (!link.transcript) {
            if (!opts.json)
              process.stdout.write(
                `━━ ${link.id}: transcript deleted (transcripts.max_files retention) or never written\n`,
              );
            continue;
          }
          print(link.transcript.header);
          if (link.inherited > 0 && !opts.json)
            process.stdout.write(`  (${link.inherited} entries from ${link.resumedFrom} shown above)\n`);
          link.transcript.entries.slice(link.inherited).forEach(print);
        }
        return;
      }

      if (!opts.follow) {
        const t = readTranscript(layout, id);
        print(t.header);
        t.entries.forEach(print);
        for (const s of t.skipped)
          process.stderr.write(`flotilla: warning: line ${s.line} of ${layout.transcript(id)} skipped: ${s.reason}\n`);
        return;
      }

      const [{ followTranscript }, { recordLiveness }, { existsSync }] = await Promise.all([
        import('../../transcript/follow.js'),
        import('../../fleet/liveness.js'),
        import('node:fs'),
      ]);
      const path = layout.transcript(id);
      const gone = (): boolean => {
        const rec = readRecord(layout, id);
        if (!rec) return true;
        const state = recordLiveness(rec);
        return state === 'ended' || state === 'dead';
      };
      if (!existsSync(path) && gone()) readTranscript(layout, id); // throws the clear "missing" error
      const stop = new AbortController();
      process.once('SIGINT', () => stop.abort());
      await followTranscript(path, print, {
        isDone: gone,
        signal: stop.signal,
        onSkip: (line, reason) =>
          process.stderr.write(`flotilla: warning: line ${line} of ${path} skipped: ${reason}\n`),
      });
    });
}
