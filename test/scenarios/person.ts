import { execa } from 'execa';
import { writeFileSync } from 'node:fs';
import { CLI } from '../helpers/cli.js';
import { eventually } from '../helpers/tmux.js';
import type { World } from './world.js';

/** What the person did and saw at one moment of the day, for docs/tour.md. */
export interface TourEntry {
  step: string;
  /** What the step is about, in a sentence or two (its first entry only). */
  about?: string;
  /** What the person typed or ran. */
  did?: string;
  /** What they saw: a pane's text or a command's output. */
  saw?: string;
}

/**
 * The person at the keyboard: types into panes, runs `flotilla` commands from their own
 * shell (no agent among its ancestors, their environment), and looks at panes. Everything
 * they do and see is kept in `tour` for docs/tour.md.
 */
export class Person {
  readonly tour: TourEntry[] = [];
  private step = '';
  private about: string | undefined;

  constructor(private readonly world: World) {}

  /** Marks the start of a step of the day in the tour, with what it is about. */
  begins(step: string, about: string): void {
    this.step = step;
    this.about = about;
  }

  private note(entry: Omit<TourEntry, 'step' | 'about'>): void {
    this.tour.push({ step: this.step, ...(this.about ? { about: this.about } : {}), ...entry });
    this.about = undefined;
  }

  /** Types a line into a pane and presses Enter. */
  async type(pane: string, line: string): Promise<void> {
    await this.world.tmux.tmux('send-keys', '-t', pane, '-l', line);
    await this.world.tmux.tmux('send-keys', '-t', pane, 'Enter');
    this.note({ did: line });
  }

  /** Presses keys (tmux key names) in a pane, as on a keyboard. */
  async press(pane: string, ...keys: string[]): Promise<void> {
    await this.world.tmux.tmux('send-keys', '-t', pane, ...keys);
    this.note({ did: `# keys in the ${windowOf(pane)} window: ${keys.join(' ')}` });
  }

  /**
   * Presses `key` in a pane until `done` holds, as a person moving a selection does, and notes
   * it once: how many presses it takes depends on the order the fleet's agents came in.
   */
  async pressUntil(pane: string, key: string, what: string, done: () => Promise<boolean>): Promise<void> {
    await eventually(
      async () => {
        if (await done()) return true;
        await this.world.tmux.tmux('send-keys', '-t', pane, key);
        await new Promise((r) => setTimeout(r, 300));
        return false;
      },
      60_000,
      what,
    );
    this.note({ did: `# keys in the ${windowOf(pane)} window: ${key} until ${what}` });
  }

  /** Waits until the pane shows `pattern`; returns what it shows. */
  async sees(pane: string, pattern: RegExp, note = true): Promise<string> {
    const screen = await this.world.tmux.waitFor(pane, pattern, 120_000);
    if (note) this.note({ saw: tidy(screen) });
    return screen;
  }

  /** What a pane shows now. */
  looks(pane: string): Promise<string> {
    return this.world.tmux.capture(pane);
  }

  /** Runs `flotilla <args>` in the project, as the person; never throws on a non-zero exit. */
  async flotilla(
    args: string[],
    opts: { quiet?: boolean } = {},
  ): Promise<{ exitCode: number; stdout: string; stderr: string }> {
    const r = await execa(process.execPath, [CLI, ...args], {
      cwd: this.world.project,
      env: this.world.env,
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
    });
    const out = { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
    if (!opts.quiet)
      this.note({ did: `flotilla ${args.join(' ')}`, saw: [out.stdout, out.stderr].filter(Boolean).join('\n') });
    return out;
  }

  /** Writes a file by hand (`did`: the command the tour shows for it; `text` shown as `shownText`, when given). */
  writes(file: string, text: string, did: string, shownText = text): void {
    writeFileSync(file, text);
    this.note({ did, saw: shownText });
  }

  /** Runs a command on another host, as the person does through ssh (`name`: how the tour calls the host). */
  async onHost(
    host: { ssh(command: string): Promise<{ exitCode: number; stdout: string; stderr: string }> },
    name: string,
    command: string,
    opts: { quiet?: boolean } = {},
  ): Promise<{ exitCode: number; stdout: string; stderr: string }> {
    const r = await host.ssh(command);
    if (!opts.quiet)
      this.note({ did: `ssh ${name} '${command}'`, saw: [r.stdout, r.stderr].filter(Boolean).join('\n') });
    return r;
  }

  /** Runs git in the project, as the person. */
  async git(...args: string[]): Promise<string> {
    const r = await execa('git', args, { cwd: this.world.project, env: this.world.env, extendEnv: false });
    this.note({ did: `git ${args.join(' ')}`, saw: String(r.stdout) });
    return String(r.stdout);
  }
}

/** A pane's window name, as the person sees it in tmux's status line. */
function windowOf(pane: string): string {
  return pane.replace(/^=[^:]*:/, '');
}

/** A screen without its trailing blank lines. */
function tidy(screen: string): string {
  return screen.replace(/\s+$/, '');
}
