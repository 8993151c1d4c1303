import { z } from 'zod';
import { isErrno } from '../errors.js';
import { looksBinary, nodeFileOperations, type FileOperations } from './file-operations.js';
import type { FileClaim } from './file-claim.js';
import { checkWritable, type WriteScope } from './protected-paths.js';
import { displayPath, resolveToolPath } from './tool-paths.js';
import type { Tool } from './types.js';
import { writeScope, type ToolSpec } from './spec.js';

/** edit {path, old, new, replace_all?}: exact string replacement in one file (§6). */

export type EditOptions = WriteScope & { claim?: FileClaim };

const editInput = z.strictObject({
  path: z.string().min(1).describe('File to change, absolute or relative to your working directory'),
  old: z.string().min(1).describe('Exact text to replace, including whitespace; must occur once unless replace_all'),
  new: z.string().describe('Replacement text'),
  replace_all: z.boolean().optional().describe('Replace every occurrence of old (default false)'),
});
export type EditInput = z.infer<typeof editInput>;

export function createEditTool(options: EditOptions, ops: FileOperations = nodeFileOperations): Tool<EditInput> {
  return {
    name: 'edit',
    klass: 'write',
    description:
      'Replace exact text in a file. `old` must match the file exactly (whitespace and indentation too; not the line-number ' +
      'prefix read shows) and occur once, unless replace_all is true. Read the file first. ' +
      'Example: {"path": "src/app.ts", "old": "const retries = 3;", "new": "const retries = 5;"}.',
    inputSchema: editInput,
    inputExample: { path: 'src/app.ts', old: 'const retries = 3;', new: 'const retries = 5;' },
    async execute(input, ctx) {
      const path = resolveToolPath(ctx.cwd, input.path);
      const shown = displayPath(ctx.cwd, path);
      const check = await checkWritable(path, options, ops);
      if (!check.ok) return { output: check.message, isError: true, meta: { path, refused: 'protected' } };
      if (input.old === input.new)
        return { output: '`old` and `new` are identical, so there is nothing to change.', isError: true };

      let buf: Buffer;
      try {
        buf = await ops.readFile(check.canonical);
      } catch (err) {
        if (isErrno(err, 'ENOENT'))
          return { output: `File not found: ${shown}. To create a file use write.`, isError: true };
        if (isErrno(err, 'EISDIR')) return { output: `${shown} is a directory; edit needs a file.`, isError: true };
        throw err;
      }
      if (looksBinary(buf))
        return { output: `${shown} looks like a binary file; edit changes text files only.`, isError: true };
      const text = buf.toString('utf8');

      let { old, new: replacement } = input;
      let at = findAll(text, old);
      // A model copies text with \n; a CRLF file has \r\n. Match it the way the file writes lines.
      if (at.length === 0 && text.includes('\r\n') && /(?<!\r)\n/.test(old)) {
        old = toCrlf(old);
        replacement = toCrlf(replacement);
        at = findAll(text, old);
      }
      if (at.length === 0)
        return { output: notFound(shown, input.old, text), isError: true, meta: { path, matches: 0 } };
      if (at.length > 1 && !input.replace_all) {
        const lineList = at.map((i) => lineOf(text, i));
        return {
          output:
            `\`old\` occurs ${at.length} times in ${shown} (at lines ${formatList(lineList)}), so the edit is ambiguous. ` +
            'Include more surrounding lines in `old` so it matches exactly once, or pass "replace_all": true to replace every occurrence.',
          isError: true,
          meta: { path, matches: at.length },
        };
      }
      const leased = await options.claim?.(check.canonical, 'edit');
      if (leased) return { output: leased, isError: true, meta: { path, refused: 'lease' } };
      ctx.signal.throwIfAborted();
      const updated = text.split(old).join(replacement);
      await ops.writeFile(check.canonical, updated);
      const firstLine = lineOf(text, at[0] ?? 0);
      const count = at.length === 1 ? '1 occurrence' : `${at.length} occurrences`;
      return {
        output: `Replaced ${count} in ${shown}. Now around line ${firstLine}:\n${snippet(updated, firstLine, replacement)}`,
        meta: { path, replacements: at.length },
      };
    },
  };
}

/** Offsets of non-overlapping occurrences, as `split` would replace them. */
function findAll(text: string, needle: string): number[] {
  const out: number[] = [];
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) out.push(i);
  return out;
}

function lineOf(text: string, offset: number): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

function toCrlf(s: string): string {
  return s.replace(/(?<!\r)\n/g, '\r\n');
}

function formatList(nums: number[]): string {
  return nums.length > 10 ? `${nums.slice(0, 10).join(', ')}, …` : nums.join(', ');
}

function notFound(shown: string, old: string, text: string): string {
  const lines = old.split('\n');
  const quoted =
    lines.length > 12 ? [...lines.slice(0, 6), `… (${lines.length - 12} lines) …`, ...lines.slice(-6)] : lines;
  let msg = `\`old\` was not found in ${shown}. Searched for (${lines.length} line${lines.length === 1 ? '' : 's'}):\n${quoted.join('\n')}\n`;
  const loose = looseMatchLine(text, old);
  if (loose !== undefined)
    msg += `Text that matches when whitespace is ignored starts at line ${loose}; copy it exactly, including indentation. `;
  return `${msg}The text must match the file exactly. Read the file (read {"path": "${shown}"}) and copy the current text into \`old\`.`;
}

/** The line where `old` would match if leading/trailing whitespace on each line did not count. */
function looseMatchLine(text: string, old: string): number | undefined {
  const want = old.split('\n').map((l) => l.trim());
  while (want.length && want[0] === '') want.shift();
  while (want.length && want[want.length - 1] === '') want.pop();
  if (want.length === 0) return undefined;
  const have = text.split('\n').map((l) => l.trim());
  for (let i = 0; i + want.length <= have.length; i++) {
    if (want.every((w, j) => have[i + j] === w)) return i + 1;
  }
  return undefined;
}

/** The changed region with line numbers and two lines of context, at most 20 lines. */
function snippet(text: string, firstLine: number, replacement: string): string {
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  const from = Math.max(1, firstLine - 2);
  const to = Math.min(lines.length, firstLine + replacement.split('\n').length + 1, from + 19);
  const width = String(to).length;
  const out: string[] = [];
  for (let n = from; n <= to; n++)
    out.push(`${String(n).padStart(Math.max(6, width))}\t${(lines[n - 1] ?? '').replace(/\r$/, '')}`);
  return out.join('\n');
}

export const editTool: ToolSpec = {
  name: 'edit',
  paneLine: (i) => `edit ${i.text('path', '?')}`,
  create: ({ workspace: w }) => w && (createEditTool(writeScope(w), w.fileOperations ?? nodeFileOperations) as Tool),
};
