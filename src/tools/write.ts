import { dirname } from 'node:path';
import { z } from 'zod';
import { isErrno } from '../errors.js';
import { nodeFileOperations, type FileOperations } from './file-operations.js';
import type { FileClaim } from './file-claim.js';
import { checkWritable, type WriteScope } from './protected-paths.js';
import { displayPath, resolveToolPath } from './tool-paths.js';
import type { Tool } from './types.js';
import { writeScope, type ToolSpec } from './spec.js';

/** write {path, content}: create or overwrite a whole file, making parent dirs (§6). */

export type WriteOptions = WriteScope & { claim?: FileClaim };

const writeInput = z.strictObject({
  path: z.string().min(1).describe('File path, absolute or relative to your working directory'),
  content: z.string().describe('The complete new content of the file'),
});
export type WriteInput = z.infer<typeof writeInput>;

export function createWriteTool(options: WriteOptions, ops: FileOperations = nodeFileOperations): Tool<WriteInput> {
  return {
    name: 'write',
    klass: 'write',
    description:
      'Create a file, or replace all of an existing file, with `content`. Parent directories are created. ' +
      'To change part of a file use edit instead. Example: {"path": "notes/plan.md", "content": "# Plan\\n- step 1\\n"}.',
    inputSchema: writeInput,
    inputExample: { path: 'notes/plan.md', content: '# Plan\n' },
    async execute(input, ctx) {
      const path = resolveToolPath(ctx.cwd, input.path);
      const shown = displayPath(ctx.cwd, path);
      const check = await checkWritable(path, options, ops);
      if (!check.ok) return { output: check.message, isError: true, meta: { path, refused: 'protected' } };

      const existing = await ops.stat(check.canonical).catch((err: unknown) => {
        if (isErrno(err, 'ENOENT')) return undefined;
        throw err;
      });
      if (existing?.isDirectory) {
        return { output: `${shown} is a directory; write needs a file path such as ${shown}/notes.md.`, isError: true };
      }
      const leased = await options.claim?.(check.canonical, 'write');
      if (leased) return { output: leased, isError: true, meta: { path, refused: 'lease' } };
      ctx.signal.throwIfAborted();
      await ops.mkdirp(dirname(check.canonical));
      await ops.writeFile(check.canonical, input.content);
      const bytes = Buffer.byteLength(input.content);
      const lines =
        input.content === '' ? 0 : input.content.split('\n').length - (input.content.endsWith('\n') ? 1 : 0);
      return {
        output: `${existing ? 'Overwrote' : 'Created'} ${shown} (${bytes} bytes, ${lines} line${lines === 1 ? '' : 's'}).`,
        meta: { path, bytes, created: !existing },
      };
    },
  };
}

export const writeTool: ToolSpec = {
  name: 'write',
  paneLine: (i) => {
    const size = i.size('content');
    return `write ${i.text('path', '?')}${size === undefined ? '' : ` (${size})`}`;
  },
  create: ({ workspace: w }) => w && (createWriteTool(writeScope(w), w.fileOperations ?? nodeFileOperations) as Tool),
};
