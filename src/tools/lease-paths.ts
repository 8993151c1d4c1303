import { z } from 'zod';
import type { Tool } from './types.js';
import type { ToolSpec } from './spec.js';

/**
 * lease_paths (docs/design.md §16): an explicit file lease, for work that spans many files or
 * happens through the shell, which write and edit cannot see. Taken as the agent itself; the
 * operations are the fleet's (leases/request.ts), bound by the harness or `flotilla mcp`.
 */
export interface LeaseOperations {
  take(ask: {
    paths: string[];
    why?: string | undefined;
    ttlMs: number | null;
    wait: boolean;
    signal: AbortSignal;
  }): Promise<{ ok: boolean; text: string }>;
  release(paths: string[] | undefined): Promise<string>;
  list(): Promise<string>;
}

const input = z.strictObject({
  paths: z
    .array(z.string().min(1))
    .optional()
    .describe('Files, folders or globs relative to your working directory, e.g. ["src/parser.ts", "docs/**"]'),
  why: z.string().max(200).optional().describe('What you are doing, shown to anyone refused'),
  ttl_minutes: z
    .number()
    .positive()
    .max(7 * 24 * 60)
    .optional()
    .describe('Keep the lease this long, even after your task ends (default: until your task ends)'),
  wait: z
    .boolean()
    .optional()
    .describe('If another agent holds one, wait in line until it is yours (default false: refused at once)'),
  release: z.boolean().optional().describe('Give these leases back (all of yours when paths is omitted)'),
});
export type LeasePathsInput = z.infer<typeof input>;

export function createLeasePathsTool(ops: LeaseOperations): Tool<LeasePathsInput> {
  return {
    name: 'lease_paths',
    klass: 'fleet',
    description:
      'Lease files so no other agent edits them while you work (write and edit lease a file automatically; use this for ' +
      'many files at once, or before changing files through the shell). Without paths: lists the leases. ' +
      'Example: {"paths": ["src/parser.ts", "src/lexer/**"], "why": "splitting the parser"}; {"paths": ["src/parser.ts"], "release": true}.',
    inputSchema: input,
    inputExample: { paths: ['src/parser.ts'], why: 'refactoring the parser' },
    async execute(i, ctx) {
      if (i.release) return { output: await ops.release(i.paths && i.paths.length > 0 ? i.paths : undefined) };
      if (!i.paths || i.paths.length === 0) return { output: await ops.list() };
      const r = await ops.take({
        paths: i.paths,
        why: i.why,
        ttlMs: i.ttl_minutes === undefined ? null : Math.round(i.ttl_minutes * 60_000),
        wait: i.wait === true,
        signal: ctx.signal,
      });
      return r.ok ? { output: r.text } : { output: r.text, isError: true, meta: { refused: 'lease' } };
    },
  };
}

export const leasePathsTool: ToolSpec = {
  name: 'lease_paths',
  create: ({ leases }) => leases && (createLeasePathsTool(leases) as Tool),
};
