import { existsSync } from 'node:fs';
import type { Config } from '../config/schema.js';
import { FlotillaError } from '../errors.js';
import { findParentAgent, forgedParentRefusal } from '../fleet/lineage.js';
import { isRecordLive } from '../fleet/liveness.js';
import type { AgentRecord } from '../fleet/record.js';
import { readRecord } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import { historyFromTranscript } from '../transcript/history.js';
import { readTranscript, type Transcript } from '../transcript/reader.js';
import type { RuntimeName } from '../runtimes/types.js';
import { resolveKnownAgent } from './resolve.js';

/** What `flotilla resume` starts from: the old agent, its conversation, the new agent's parent. */
export interface ResumePlan {
  oldId: string;
  /** The definition the new agent runs (the old agent's). */
  definition: string;
  /** Messages of the rebuilt history the new agent starts with. */
  messages: number;
  /** The old agent's model, used unless `--model` says otherwise. */
  model: string | undefined;
  /** The old agent's working directory, when it still exists. */
  cwd: string | undefined;
  /**
   * The new agent's parent: the old agent's parent when that one is alive; otherwise the
   * agent the caller runs inside (so an agent cannot mint a root by resuming), else none
   * (a root, spawned by a person).
   */
  parent: AgentRecord | null;
  /** What runs the new agent: the old agent's runtime (a vendor CLI continues its own session, docs/runtimes.md). */
  runtime: RuntimeName;
  /** The old agent's transcript; null for a vendor agent, whose conversation is its CLI's session file. */
  transcript: Transcript | null;
}

/**
 * Checks everything `flotilla resume` needs before anything is spawned (§8): transcripts on,
 * the agent known, its transcript present, readable, whole and with a conversation in it —
 * or, for a vendor agent, its CLI's session file with a conversation in it. Throws an error
 * that says what is wrong; nothing is created.
 */
export async function planResume(
  layout: Layout,
  config: Pick<Config, 'transcripts'>,
  prefix: string,
  opts: { pid?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<ResumePlan> {
  const oldId = resolveKnownAgent(layout, prefix);
  const old = readRecord(layout, oldId);
  if (old && old.runtime !== 'flotilla') return planVendorResume(layout, old, opts);
  if (!config.transcripts.enabled) {
    throw new FlotillaError(
      'cannot resume: transcripts are disabled (transcripts.enabled: false in the config), and resume rebuilds the conversation from the transcript — set transcripts.enabled: true; agents started after that can be resumed',
      { code: 'transcripts-disabled' },
    );
  }
  let transcript: Transcript;
  try {
    transcript = readTranscript(layout, oldId);
  } catch (err) {
    const e = err as FlotillaError;
    throw new FlotillaError(`cannot resume '${oldId}': ${e.message}`, { code: e.code ?? 'error', cause: err });
  }
  if (transcript.skipped.length > 0) {
    const s = transcript.skipped[0]!;
    throw new FlotillaError(
      `cannot resume '${oldId}': its transcript is corrupt at line ${s.line} (${s.reason}${transcript.skipped.length > 1 ? `, and ${transcript.skipped.length - 1} more line(s)` : ''}) — resuming would give the model a conversation with holes; read it with 'flotilla transcript ${oldId}' and start a new agent instead`,
      { code: 'transcript-corrupt' },
    );
  }
  const history = historyFromTranscript(transcript.entries);
  if (history.length === 0) {
    throw new FlotillaError(
      `cannot resume '${oldId}': its transcript holds no conversation (the agent ended before its first message) — spawn a new agent instead`,
      { code: 'transcript-empty' },
    );
  }

  const definition = old?.name ?? transcript.header.def_name;
  const cwd = old?.cwd ?? transcript.header.cwd ?? undefined;
  return {
    oldId,
    definition,
    messages: history.length,
    model: old?.model ?? transcript.header.model ?? undefined,
    cwd: cwd && existsSync(cwd) ? cwd : undefined,
    parent: resumeParent(layout, old, opts),
    runtime: 'flotilla',
    transcript,
  };
}

/**
 * A vendor agent continues its CLI's own session (docs/runtimes.md, "Resume and transcript"):
 * the session file must hold a conversation. Its model is the CLI's (`codex:gpt-5` → `gpt-5`),
 * and it runs on the same runtime whatever its definition says now.
 */
async function planVendorResume(
  layout: Layout,
  old: AgentRecord,
  opts: { pid?: number; env?: NodeJS.ProcessEnv },
): Promise<ResumePlan> {
  const { readVendorSession } = await import('./vendor-session.js');
  let session: Awaited<ReturnType<typeof readVendorSession>>;
  try {
    session = await readVendorSession(layout, old);
  } catch (err) {
    const e = err as FlotillaError;
    throw new FlotillaError(`cannot resume '${old.id}': ${e.message} — spawn a new agent instead`, {
      code: e.code ?? 'error',
      cause: err,
    });
  }
  if (session.turns.length === 0) {
    throw new FlotillaError(
      `cannot resume '${old.id}': its ${session.runtime.title} session (${session.file}) holds no conversation — spawn a new agent instead`,
      { code: 'transcript-empty' },
    );
  }
  const prefix = `${old.runtime}:`;
  const model = old.model.startsWith(prefix) ? old.model.slice(prefix.length) || undefined : undefined;
  return {
    oldId: old.id,
    definition: old.name,
    messages: session.turns.length,
    model,
    cwd: existsSync(old.cwd) ? old.cwd : undefined,
    parent: resumeParent(layout, old, opts),
    runtime: old.runtime,
    transcript: null,
  };
}

/**
 * The old agent's parent while it lives; else the agent the caller runs inside (no minted roots); else none (a person's
 * root).
 */
function resumeParent(
  layout: Layout,
  old: AgentRecord | undefined,
  opts: { pid?: number; env?: NodeJS.ProcessEnv },
): AgentRecord | null {
  const oldParent = old?.parentId ? readRecord(layout, old.parentId) : undefined;
  if (oldParent && isRecordLive(oldParent)) return oldParent;
  const lineage = findParentAgent(layout, {
    ...(opts.pid === undefined ? {} : { pid: opts.pid }),
    env: opts.env ?? process.env,
  });
  if (lineage.forged) throw forgedParentRefusal(lineage.forged);
  return lineage.parent;
}

/** The line `flotilla resume` prints (to stderr: stdout is the id or the answer). */
export function resumingLine(plan: ResumePlan, newId: string): string {
  return `Resuming ${plan.oldId} (${plan.definition}) with ${plan.messages} message${plan.messages === 1 ? '' : 's'} as ${newId}`;
}
