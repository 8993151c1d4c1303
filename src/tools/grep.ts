import { z } from 'zod';
import { errorMessage, isErrno } from '../errors.js';
import { looksBinary, nodeFileOperations, type FileOperations } from './file-operations.js';
import { displayPath, resolveToolPath, SEARCH_IGNORE } from './tool-paths.js';
import type { Tool } from './types.js';
import type { ToolSpec } from './spec.js';

/** grep {pattern, path?, glob?, ignore_case?}: regex search through files, `path:line:text` (§6). */

export interface GrepOptions {
  /** Matching lines listed per call (default 200). */
  maxMatches?: number;
  /** Larger files are skipped (default 1 MiB): they are data or generated, rarely code. */
  maxFileBytes?: number;
  /** A longer matching line is cut (default 300 characters). */
  maxLineChars?: number;
}

const grepInput = z.strictObject({
  pattern: z.string().min(1).describe('JavaScript regular expression, e.g. "function\\\\s+main"'),
  path: z.string().min(1).optional().describe('File or directory to search (default: your working directory)'),
  glob: z.string().min(1).optional().describe('Only files matching this glob, e.g. "*.ts" or "src/**/*.py"'),
  ignore_case: z.boolean().optional().describe('Case-insensitive match (default false)'),
});
export type GrepInput = z.infer<typeof grepInput>;

export function createGrepTool(options: GrepOptions = {}, ops: FileOperations = nodeFileOperations): Tool<GrepInput> {
  const maxMatches = options.maxMatches ?? 200;
  const maxFileBytes = options.maxFileBytes ?? 1024 * 1024;
  const maxLineChars = options.maxLineChars ?? 300;
  return {
    name: 'grep',
    klass: 'read',
    description:
      'Search file contents with a JavaScript regular expression; prints path:line:text for each matching line. ' +
      'Binary files, files over 1 MiB, node_modules and .git are skipped. ' +
      'Example: {"pattern": "TODO|FIXME", "path": "src", "glob": "*.ts", "ignore_case": true}.',
    inputSchema: grepInput,
    inputExample: { pattern: 'export function', path: 'src', glob: '*.ts' },
    outputHint: 'Narrow the search with path or glob, or a more specific pattern, to see the cut matches.',
    async execute(input, ctx) {
      let re: RegExp;
      try {
        re = new RegExp(input.pattern, input.ignore_case ? 'i' : '');
      } catch (err) {
        return {
          output: `pattern ${JSON.stringify(input.pattern)} is not a valid JavaScript regular expression: ${errorMessage(err)}. Escape special characters such as ( [ { . * + ? with a backslash to match them literally.`,
          isError: true,
        };
      }
      const root = resolveToolPath(ctx.cwd, input.path ?? '.');
      const st = await ops.stat(root).catch((err: unknown) => {
        if (isErrno(err, 'ENOENT') || isErrno(err, 'ENOTDIR')) return undefined;
        throw err;
      });
      if (!st)
        return {
          output: `path not found: ${displayPath(ctx.cwd, root)}. Omit path to search your working directory.`,
          isError: true,
        };

      let files: string[];
      if (st.isDirectory) {
        // Like ripgrep's --glob: a pattern without a slash matches file names at any depth.
        const filter = input.glob ? (input.glob.includes('/') ? input.glob : `**/${input.glob}`) : '**/*';
        files = (await ops.glob(filter, { cwd: root, ignore: SEARCH_IGNORE })).sort();
      } else {
        files = [root];
      }

      const out: string[] = [];
      let matches = 0;
      let skipped = 0;
      for (const file of files) {
        ctx.signal.throwIfAborted();
        const size = (await ops.stat(file).catch(() => undefined))?.size;
        if (size === undefined || size > maxFileBytes) {
          skipped++;
          continue;
        }
        const buf = await ops.readFile(file).catch(() => undefined);
        if (!buf || looksBinary(buf)) continue;
        const shown = displayPath(ctx.cwd, file);
        const lines = buf.toString('utf8').split('\n');
        for (let i = 0; i < lines.length; i++) {
          const line = (lines[i] ?? '').replace(/\r$/, '');
          if (!re.test(line)) continue;
          matches++;
          if (out.length < maxMatches) out.push(`${shown}:${i + 1}:${cut(line, maxLineChars)}`);
        }
      }
      const skippedNote = skipped
        ? `${skipped} file${skipped === 1 ? '' : 's'} over ${maxFileBytes} bytes skipped`
        : '';
      if (matches === 0) {
        const where = `${files.length} file${files.length === 1 ? '' : 's'}${skipped ? ` (${skippedNote})` : ''}`;
        return {
          output: `No matches for ${JSON.stringify(input.pattern)} in ${where}.`,
          meta: { matches, files: files.length, skipped },
        };
      }
      let output = out.join('\n');
      if (matches > maxMatches) {
        output += `\n\n[Showing the first ${maxMatches} of ${matches} matching lines${skipped ? `; ${skippedNote}` : ''}. Narrow the search with path, glob or a more specific pattern to see the rest.]`;
      } else if (skipped) {
        output += `\n\n[${skippedNote}; search those with shell if needed.]`;
      }
      return { output, meta: { matches, files: files.length, skipped } };
    },
  };
}

function cut(line: string, max: number): string {
  return line.length <= max ? line : `${line.slice(0, max)}… [${line.length - max} more characters]`;
}

export const grepTool: ToolSpec = {
  name: 'grep',
  paneLine: (i) => {
    const path = i.optional('path');
    return `grep ${i.text('pattern', '?')}${path !== undefined ? ` in ${path}` : ''}`;
  },
  create: ({ workspace: w }) => w && (createGrepTool({}, w.fileOperations ?? nodeFileOperations) as Tool),
};
