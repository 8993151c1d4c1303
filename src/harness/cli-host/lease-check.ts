import { homedir } from 'node:os';
import { audit } from '../../audit/audit.js';
import type { AgentRecord } from '../../fleet/record.js';
import type { Layout } from '../../layout/layout.js';
import type { HookReply, Runtime } from '../../runtimes/index.js';
import { resolveToolPath } from '../../tools/tool-paths.js';
import { realPath } from '../read-scope.js';

/**
 * File leases in a vendor CLI (docs/design.md §16): its pre-tool hook takes the lease on every
 * file its file tool would change, exactly as our write and edit do, or denies the call with
 * the same message, which the CLI shows its model. Each CLI's spelling of "which file" is read
 * here: Claude Code's Edit, Write, MultiEdit (`file_path`) and NotebookEdit (`notebook_path`),
 * Gemini CLI's write_file and replace (`file_path`), Codex's apply_patch (the file headers
 * of the patch text in its hook's `tool_input`, whether the model called it directly
 * or from code mode's `exec`: docs/runtimes.md, "Codex's file tool").
 */
export async function vendorLeaseCheck(
  layout: Layout,
  runtime: Runtime,
  rec: Pick<AgentRecord, 'id' | 'cwd' | 'task'>,
  call: { tool: string; input?: Record<string, unknown> | undefined },
  payload: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): Promise<HookReply | null> {
  const cwd = typeof payload.cwd === 'string' && payload.cwd ? payload.cwd : rec.cwd;
  const targets = vendorWriteTargets(call.tool, call.input ?? {}, cwd, env.HOME ?? homedir());
  if (!targets || targets.length === 0) return null;
  const [{ leaseForEdit }, { conflictMessage }] = await Promise.all([
    import('../../team-store/leases.js'),
    import('../../leases/view.js'),
  ]);
  for (const file of targets) {
    const r = await leaseForEdit(layout, file, rec.id, rec.task, runtime.name);
    if (r.ok) continue;
    audit(layout, {
      event: 'policy_denied',
      agent: rec.id,
      tool: call.tool,
      rule: 'lease',
      holder: r.conflict.lease.holder,
      path: r.conflict.path,
      via: runtime.name,
    });
    return runtime.denyTool(conflictMessage(r.conflict, 'this change was not made and the file is unchanged'));
  }
  return null;
}

/** The files a vendor file tool would change (absolute, links resolved); undefined for a tool that changes none. */
export function vendorWriteTargets(
  tool: string,
  input: Record<string, unknown>,
  cwd: string,
  home: string,
): string[] | undefined {
  const str = (v: unknown) => (typeof v === 'string' && v.length > 0 ? v : undefined);
  const at = (p: string) => realPath(resolveToolPath(cwd, p, home));
  if (tool === 'NotebookEdit') {
    const p = str(input.notebook_path);
    return p ? [at(p)] : [];
  }
  if (tool !== 'write' && tool !== 'edit') return undefined;
  const file = str(input.file_path) ?? str(input.absolute_path) ?? str(input.path);
  if (file) return [at(file)];
  // Codex's apply_patch: the patch is its input, under whichever key its hook payload uses.
  const patch = Object.values(input).find((v): v is string => typeof v === 'string' && v.includes('*** Begin Patch'));
  return patch ? patchFiles(patch).map(at) : [];
}

/** The files an apply_patch text adds, updates, deletes or moves to. */
export function patchFiles(patch: string): string[] {
  const out = new Set<string>();
  for (const line of patch.split('\n')) {
    const m = /^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+?)\s*$/.exec(line);
    if (m?.[1]) out.add(m[1]);
  }
  return [...out];
}
