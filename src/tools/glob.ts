import { z } from 'zod';
import { nodeFileOperations, type FileOperations } from './file-operations.js';
import { displayPath, SEARCH_IGNORE } from './tool-paths.js';
import type { Tool } from './types.js';
import type { ToolSpec } from './spec.js';

/** glob {pattern}: file paths matching a pattern, newest first (§6). */

export interface GlobOptions {
  /** Paths listed per call (default 200). */
  maxResults?: number;
}

const globInput = z.strictObject({
  pattern: z.string().min(1).describe('Glob relative to your working directory (or absolute), e.g. "src/**/*.ts"'),
});
export type GlobInput = z.infer<typeof globInput>;

export function createGlobTool(options: GlobOptions = {}, ops: FileOperations = nodeFileOperations): Tool<GlobInput> {
  const maxResults = options.maxResults ?? 200;
  return {
    name: 'glob',
    klass: 'read',
    description:
      'List files whose paths match a glob pattern (** = any depth, * = any name part, {a,b} = either), most recently ' +
      'modified first. node_modules and .git are skipped. Example: {"pattern": "src/**/*.test.ts"}.',
    inputSchema: globInput,
    inputExample: { pattern: 'src/**/*.ts' },
    outputHint: 'Use a narrower pattern to see the cut paths.',
    async execute(input, ctx) {
      const files = await ops.glob(input.pattern, { cwd: ctx.cwd, ignore: SEARCH_IGNORE });
      if (files.length === 0)
        return { output: `No files match ${input.pattern} under ${ctx.cwd}.`, meta: { matches: 0 } };
      const dated = await Promise.all(
        files.map(async (path) => ({ path, mtimeMs: (await ops.stat(path).catch(() => undefined))?.mtimeMs ?? 0 })),
      );
      ctx.signal.throwIfAborted();
      dated.sort((a, b) => b.mtimeMs - a.mtimeMs || a.path.localeCompare(b.path));
      const shown = dated.slice(0, maxResults).map((f) => displayPath(ctx.cwd, f.path));
      let output = shown.join('\n');
      if (dated.length > maxResults) {
        output += `\n\n[Showing ${maxResults} of ${dated.length} matches, newest first. Use a narrower pattern (e.g. a subdirectory or an extension) to see the rest.]`;
      }
      return { output, meta: { matches: dated.length } };
    },
  };
}

export const globTool: ToolSpec = {
  name: 'glob',
  paneLine: (i) => `glob ${i.text('pattern', '?')}`,
  create: ({ workspace: w }) => w && (createGlobTool({}, w.fileOperations ?? nodeFileOperations) as Tool),
};
