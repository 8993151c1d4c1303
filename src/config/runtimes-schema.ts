import { z } from 'zod';

/** The config's `runtimes` section (docs/runtimes.md): how each vendor CLI run as an agent is found and logs in. */

/** One vendor CLI's settings (docs/runtimes.md). */
const runtimeSettings = (title: string) =>
  z
    .object({
      command: z
        .string()
        .min(1)
        .nullable()
        .default(null)
        .describe(
          `Path of the ${title} CLI to run; null = PATH, then the project's node_modules/.bin, then the CLIs installed beside Flotilla`,
        ),
      login: z
        .enum(['shared', 'isolated'])
        .default('shared')
        .describe(
          `'shared': agents use the person's own ${title} login by reference (docs/runtimes.md lists the files read); 'isolated': only keys in the environment, or a login typed into the agent's window`,
        ),
    })
    .strict()
    .prefault({})
    .describe(title);

export const runtimesSchema = z
  .object({
    claude: runtimeSettings('Claude Code'),
    codex: runtimeSettings('Codex'),
    gemini: runtimeSettings('Gemini CLI'),
  })
  .strict()
  .prefault({})
  .describe('Vendor CLIs run as agents (--runtime)');
