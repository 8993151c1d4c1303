import { Command } from 'commander';
import { cliConfig, cliContext } from '../context.js';
import type { Layout } from '../../layout/layout.js';
import { printJson } from '../output.js';

interface ResumeOpts {
  prompt?: string;
  oneshot?: boolean;
  background?: boolean;
  session?: boolean;
  model?: string;
  id?: string;
  json?: boolean;
}

/** `flotilla resume <id> [prompt…]` (§8): a new agent whose history is that agent's transcript. */
export function command(): Command {
  return new Command('resume')
    .description("start a new agent with an old agent's transcript as its history; the prompt is its next user turn")
    .argument('<id>', 'the agent to resume (id or unique prefix)')
    .argument(
      '[prompt...]',
      'what to say next (default: stdin when it is not a TTY; none opens the window waiting for input)',
    )
    .option('--prompt <text>', 'the next user turn, instead of arguments')
    .option('--oneshot', 'run here in this process: print the final answer on stdout, exit 0 if it completed')
    .option('--background', 'no tmux: a detached headless process with output to its log')
    .option('--session', 'open in its own detached tmux session instead of a window')
    .option('--model <spec>', "model to continue with (default: the old agent's)")
    .option('--id <id>', 'choose the new agent id')
    .option('--json', 'print the new registry record as JSON instead of the id')
    .action(async (id: string, words: string[], opts: ResumeOpts, cmd: Command) => {
      const { layout } = cliContext(cmd);
      const { config } = await cliConfig(layout);
      const [{ planResume, resumingLine }, { prepareSpawn }, { UsageError }] = await Promise.all([
        import('../../outputs/resume.js'),
        import('../../spawn/prepare.js'),
        import('../../errors.js'),
      ]);
      if (opts.oneshot && opts.background)
        throw new UsageError(
          '--oneshot and --background exclude each other — --oneshot runs here, --background detaches',
        );
      const plan = await planResume(layout, config, id);
      // A vendor CLI runs in its own window, where it continues its session (docs/runtimes.md).
      if (plan.runtime !== 'flotilla' && (opts.oneshot || opts.background)) {
        throw new UsageError(
          `${plan.oldId} runs on --runtime ${plan.runtime}, whose CLI continues its session in a window — resume it without ${opts.oneshot ? '--oneshot' : '--background'} (add --session for a detached tmux session)`,
        );
      }
      let prompt = opts.prompt ?? (words.length ? words.join(' ') : undefined);
      if (prompt === undefined && !process.stdin.isTTY) prompt = await readStdin();
      prompt ??= '';
      // On a bus, mail to the ended agent waits there (nobody's harness feeds it): bring it into
      // its spool first, where the successor adopts it (§8, §18.4).
      if (opts.background && !prompt.trim() && config.fleet.bus !== 'maildir')
        await (await import('../../bus/open.js')).busFor(layout, config).mail.collect([plan.oldId]);
      // A background agent with mail waiting has its next instruction: the mail (adopted at start).
      if ((opts.oneshot || (opts.background && !(await hasUnread(layout, plan.oldId)))) && !prompt.trim()) {
        throw new UsageError(
          `no prompt given — a ${opts.oneshot ? 'one-shot' : 'background'} resume needs the next instruction (or, in the background, mail waiting for it): flotilla resume ${plan.oldId} "continue with …"`,
        );
      }
      const tty = !!process.stdin.isTTY || !!process.stdout.isTTY;
      const mode = opts.oneshot ? (tty ? 'oneshot' : 'headless') : opts.background ? 'headless' : 'interactive';

      if (!opts.oneshot && !opts.background) {
        const { tmuxPreflight } = await import('../../spawn/launch.js');
        await tmuxPreflight(config);
      }
      const prepared = await prepareSpawn(
        layout,
        config,
        {
          agent: plan.definition,
          id: opts.id,
          prompt,
          cwd: plan.cwd,
          mode,
          background: opts.background,
          model: opts.model ?? plan.model,
          runtime: plan.runtime,
          resumedFrom: plan.oldId,
        },
        { parent: plan.parent },
      );
      process.stderr.write(resumingLine(plan, prepared.record.id) + '\n');

      if (opts.oneshot) {
        // This process is the spawner and the harness: it hands the running slot to itself.
        process.env.FLOTILLA_SLOT = prepared.slot.envValue;
        void prepared.slot.waitForHandoff(10_000);
        const { runHarness } = await import('../../harness/run.js');
        const code = await runHarness({
          layout,
          config,
          spawnedId: prepared.record.id,
          stdinIsTTY: !!process.stdin.isTTY,
          stdoutIsTTY: !!process.stdout.isTTY,
        });
        // Watchers, sockets and timers must not keep a finished agent alive.
        process.exit(code);
      }
      const { launchAgent } = await import('../../spawn/launch.js');
      const rec = await launchAgent(layout, config, prepared, { background: opts.background, session: opts.session });
      if (opts.json) printJson(rec);
      else process.stdout.write(rec.id + '\n');
    });
}

async function hasUnread(layout: Layout, id: string): Promise<boolean> {
  const [{ readdir }, { isCandidate, maildir }] = await Promise.all([
    import('node:fs/promises'),
    import('../../inbox/maildir.js'),
  ]);
  return (await readdir(maildir(layout, id).new).catch(() => [])).some(isCandidate);
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
