import { z } from 'zod';
import { isErrno } from '../errors.js';
import { looksBinary, nodeFileOperations, type FileOperations } from './file-operations.js';
import type { Tool } from './types.js';
import { displayPath, resolveToolPath } from './tool-paths.js';
import type { ToolSpec } from './spec.js';

/** read {path, offset?, limit?}: a text file with line numbers, a window at a time (§6). */

export interface ReadOptions {
  /** Lines shown when no limit is given (default 2000). */
  defaultLimit?: number;
  /** A longer line is cut, with a note (default 2000 characters). */
  maxLineChars?: number;
  /** Bytes of numbered lines per call; the rest is offered by offset (default 30000). */
  maxOutputBytes?: number;
  /** Larger files are refused with a hint to use shell (default 20 MiB). */
  maxFileBytes?: number;
}

const readInput = z.strictObject({
  path: z.string().min(1).describe('File path, absolute or relative to your working directory'),
  offset: z.number().int().min(1).optional().describe('First line to show, 1-based (default 1)'),
  limit: z.number().int().min(1).optional().describe('How many lines to show (default 2000)'),
});
export type ReadInput = z.infer<typeof readInput>;

export function createReadTool(options: ReadOptions = {}, ops: FileOperations = nodeFileOperations): Tool<ReadInput> {
  const defaultLimit = options.defaultLimit ?? 2000;
  const maxLineChars = options.maxLineChars ?? 2000;
  const maxOutputBytes = options.maxOutputBytes ?? 30_000;
  const maxFileBytes = options.maxFileBytes ?? 20 * 1024 * 1024;
  return {
    name: 'read',
    klass: 'read',
    description:
      `Read a text file. Lines come numbered ("    12\\tcode"); the number and tab are not part of the file. ` +
      `Shows up to ${defaultLimit} lines; use offset and limit for long files. ` +
      `Example: {"path": "src/main.ts", "offset": 100, "limit": 50}. For a directory listing use glob.`,
    inputSchema: readInput,
    inputExample: { path: 'src/main.ts', offset: 1, limit: 200 },
    outputHint: 'Use a smaller limit, or a later offset, to see the cut lines.',
    async execute(input, ctx) {
      const path = resolveToolPath(ctx.cwd, input.path);
      const shown = displayPath(ctx.cwd, path);
      let st;
      try {
        st = await ops.stat(path);
      } catch (err) {
        if (!isErrno(err, 'ENOENT') && !isErrno(err, 'ENOTDIR')) throw err;
        return {
          output: `File not found: ${shown}. Check the path, or find the file with glob, e.g. {"pattern": "**/${basenameOf(input.path)}"}.`,
          isError: true,
        };
      }
      if (st.isDirectory) {
        return {
          output: `${shown} is a directory, not a file. List it with glob, e.g. {"pattern": "${globBase(shown)}*"}.`,
          isError: true,
        };
      }
      if (st.size > maxFileBytes) {
        return {
          output: `${shown} is ${st.size} bytes, more than read loads (${maxFileBytes}). Look at parts of it with shell, e.g. "sed -n '1,200p' ${shown}" or "grep -n PATTERN ${shown}".`,
          isError: true,
        };
      }
      const buf = await ops.readFile(path);
      if (looksBinary(buf)) {
        return {
          output: `${shown} looks like a binary file (${buf.length} bytes, contains NUL bytes); read shows text only. Inspect it with shell, e.g. "file ${shown}" or "xxd ${shown} | head".`,
          isError: true,
          meta: { path, binary: true },
        };
      }
      if (buf.length === 0) return { output: `(${shown} is empty)`, meta: { path, totalLines: 0 } };

      const lines = splitLines(buf.toString('utf8'));
      const offset = input.offset ?? 1;
      if (offset > lines.length) {
        return {
          output: `offset ${offset} is past the end of ${shown}, which has ${lines.length} line${lines.length === 1 ? '' : 's'}. Use an offset from 1 to ${lines.length}.`,
          isError: true,
        };
      }
      const wanted = Math.min(lines.length, offset - 1 + (input.limit ?? defaultLimit));
      const width = String(wanted).length;
      const out: string[] = [];
      let bytes = 0;
      let last = offset - 1;
      for (let i = offset - 1; i < wanted; i++) {
        const text = cutLine(lines[i] ?? '', maxLineChars);
        const line = `${String(i + 1).padStart(Math.max(6, width))}\t${text}`;
        bytes += Buffer.byteLength(line) + 1;
        // Always show at least one line, even a huge one, so the model makes progress.
        if (bytes > maxOutputBytes && out.length > 0) break;
        out.push(line);
        last = i + 1;
      }
      let output = out.join('\n');
      if (last < lines.length) {
        const why = last < wanted ? ` (output capped at ${maxOutputBytes} bytes)` : '';
        output += `\n\n[Showing lines ${offset}-${last} of ${lines.length}${why}. Use offset=${last + 1} to see more.]`;
      }
      return { output, meta: { path, offset, lastLine: last, totalLines: lines.length } };
    },
  };
}

/** Lines without their terminators; a final newline does not start another line. */
function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  // CRLF files: show the text, not the carriage return.
  return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}

function cutLine(line: string, max: number): string {
  if (line.length <= max) return line;
  return `${line.slice(0, max)}… [line cut: ${line.length - max} more characters; use shell, e.g. "cut -c1-${max * 2}", to see it]`;
}

function basenameOf(p: string): string {
  const parts = p.split('/').filter(Boolean);
  return parts[parts.length - 1] ?? p;
}

function globBase(dir: string): string {
  if (dir === '.' || dir === '') return '';
  return dir.endsWith('/') ? dir : `${dir}/`;
}

export const readTool: ToolSpec = {
  name: 'read',
  paneLine: (i) =>
    `read ${i.text('path', '?')}${typeof i.raw.offset === 'number' ? ` (from line ${i.raw.offset})` : ''}`,
  // Leave room for the hint line within the central cap, so read's own hint is never cut.
  create: ({ workspace: w }) =>
    w &&
    (createReadTool(
      w.maxOutputBytes ? { maxOutputBytes: Math.max(1000, w.maxOutputBytes - 200) } : {},
      w.fileOperations ?? nodeFileOperations,
    ) as Tool),
};
