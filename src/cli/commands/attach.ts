import { Command } from 'commander';
import { cliContext } from '../context.js';

/** `flotilla attach <id>` (§2): move the tmux client to that agent's window. */
export function command(): Command {
  return new Command('attach')
    .description("switch the tmux client to the agent's window (attach to its session from outside tmux)")
    .argument('<id>', 'agent id or unique prefix')
    .action(async (prefix: string, _opts: unknown, cmd: Command) => {
      const { layout } = cliContext(cmd);
      const [{ resolveAgent }, { Tmux }, { FlotillaError }] = await Promise.all([
        import('../../fleet/registry.js'),
        import('../../tmux/client.js'),
        import('../../errors.js'),
      ]);
      const rec = resolveAgent(layout, prefix);
      if (!rec.tmux) {
        throw new FlotillaError(
          `'${rec.id}' has no tmux window (it runs headless) — follow it with 'flotilla transcript ${rec.id} --follow'`,
          { code: 'no-window' },
        );
      }
      const tmux = new Tmux({ socket: rec.tmux.socket });
      try {
        await tmux.selectWindow(rec.tmux.windowId);
      } catch {
        throw new FlotillaError(
          `the window of '${rec.id}' is gone (${rec.status}) — read what it did with 'flotilla transcript ${rec.id}'`,
          { code: 'no-window' },
        );
      }
      if (process.env.TMUX) await tmux.switchClient(rec.tmux.windowId);
      else process.exitCode = await tmux.attachSession(rec.tmux.sessionId);
    });
}
