import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { FlotillaError, errorMessage } from '../../errors.js';
import { checkTemplates } from './template.js';

/**
 * The scripted model's file format (docs/scripted-model.md). Either a list of replies or an
 * object with `replies` plus shared `defaults`.
 */

const pacing = {
  chunk_chars: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe('Stream text in chunks of this many characters (0 = one chunk)'),
  delay_ms: z.number().nonnegative().optional().describe('Pause before each streamed chunk'),
  latency_ms: z.number().nonnegative().optional().describe('Pause before the reply starts'),
};

const kind = z.enum(['user', 'inbox', 'tool_result', 'tool_error']);

export const guardSchema = z
  .object({
    contains: z.string().optional().describe('The latest input contains this text'),
    matches: z.string().optional().describe('The latest input matches this regular expression'),
    kind: z
      .union([kind, z.array(kind).min(1)])
      .optional()
      .describe('The latest input includes this kind of message (any of a list)'),
    tool: z.string().optional().describe('The latest input includes a result of this tool'),
  })
  .strict();

export const replySchema = z
  .object({
    when: guardSchema.optional(),
    repeat: z.boolean().default(false).describe('Stay available after being played'),
    text: z.string().optional(),
    tool_calls: z
      .array(
        z
          .object({
            tool: z.string().min(1),
            input: z.record(z.string(), z.unknown()).default({}),
            id: z.string().min(1).optional(),
          })
          .strict(),
      )
      .default([]),
    usage: z
      .object({
        input_tokens: z.number().int().nonnegative().optional(),
        output_tokens: z.number().int().nonnegative().optional(),
      })
      .strict()
      .optional(),
    error: z
      .object({
        status: z.number().int().min(100).max(599).default(500),
        message: z.string().default('scripted provider error'),
        times: z
          .number()
          .int()
          .positive()
          .optional()
          .describe('Fail only the first N calls at this point, then play the reply'),
      })
      .strict()
      .optional(),
    ...pacing,
  })
  .strict()
  .refine((r) => r.text !== undefined || r.tool_calls.length > 0 || r.error !== undefined, {
    message: 'a reply needs text, tool_calls or error',
  });

export const scriptSchema = z
  .object({
    name: z.string().optional(),
    defaults: z.object(pacing).strict().default({}),
    exhausted: z.string().default('[script exhausted]').describe('Text answered once no reply is left'),
    replies: z.array(replySchema),
  })
  .strict();

export type Script = z.infer<typeof scriptSchema>;
export type Guard = z.infer<typeof guardSchema>;
export type ScriptInput = z.input<typeof scriptSchema> | z.input<typeof replySchema>[];

/** Validates a script given as data (a list of replies or the full object). */
export function parseScript(data: unknown, source = 'script'): Script {
  const parsed = scriptSchema.safeParse(Array.isArray(data) ? { replies: data } : data);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.map(String).join('.') || '(top level)'}: ${i.message}`);
    throw new FlotillaError(
      `invalid scripted model ${source}: ${issues.join('; ')} — see docs/scripted-model.md for the format`,
      {
        code: 'script-invalid',
      },
    );
  }
  parsed.data.replies.forEach((r, i) => {
    for (const m of [r.when?.matches].filter((x) => x !== undefined)) {
      try {
        new RegExp(m);
      } catch (err) {
        throw new FlotillaError(
          `invalid scripted model ${source}: replies.${i}.when.matches: ${errorMessage(err)} — write a JavaScript regular expression`,
          {
            code: 'script-invalid',
          },
        );
      }
    }
    const problem = checkTemplates([r.text, r.tool_calls.map((c) => c.input)]);
    if (problem)
      throw new FlotillaError(`invalid scripted model ${source}: replies.${i}: ${problem}`, { code: 'script-invalid' });
  });
  const problem = checkTemplates([parsed.data.exhausted]);
  if (problem)
    throw new FlotillaError(`invalid scripted model ${source}: exhausted: ${problem}`, { code: 'script-invalid' });
  return parsed.data;
}

/** Reads and validates a script file. */
export function loadScript(file: string): Script {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new FlotillaError(
      `cannot read scripted model file '${file}': ${errorMessage(err)} — check the path after 'script:'`,
      {
        code: 'script-missing',
        cause: err,
      },
    );
  }
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (err) {
    throw new FlotillaError(`scripted model file '${file}' is not valid YAML: ${errorMessage(err)}`, {
      code: 'script-invalid',
      cause: err,
    });
  }
  return parseScript(data, `file '${file}'`);
}
