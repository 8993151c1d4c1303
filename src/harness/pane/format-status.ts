import type { AgentRecord } from '../../fleet/record.js';
import { formatTurns } from '../../fleet/turn-counter.js';
import { truncate, type Style } from './ansi.js';

/** What the pane knows about its agent from the start (passed to `startRepl`). */
export interface PaneHeader {
  id: string;
  name: string;
  depth: number;
  maxDepth: number;
  model: string;
  /** True when the model is the deterministic scripted model: always shown. */
  scripted: boolean;
  parentId: string | null;
}

export type StatusFacts = Pick<AgentRecord, 'status' | 'turns' | 'taskTurns' | 'maxTurns' | 'runtime' | 'usage'>;

export const SCRIPTED_MARKER = '[scripted model]';

/** `12.3k`, `950`, `1.2M`. */
export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(1)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/**
 * The status line kept just above the prompt:
 * `worker-ab12cd · working · depth 1/3 · turn 4/20 · 12.3k tok · script:demo.yaml [scripted model]`.
 * Fits in `width - 1` columns so it never wraps; the model name is shortened first so the
 * scripted marker always stays visible.
 */
export function formatStatusLine(header: PaneHeader, facts: StatusFacts, style: Style, width: number): string {
  const tokens = facts.usage.inputTokens + facts.usage.outputTokens;
  const cost = facts.usage.costUsd === null ? '' : ` $${facts.usage.costUsd.toFixed(2)}`;
  const fixed = [
    header.id,
    facts.status,
    `depth ${header.depth}/${header.maxDepth}`,
    `turn ${formatTurns(facts)}`,
    `${formatTokens(tokens)} tok${cost}`,
  ].join(' · ');
  const marker = header.scripted ? ` ${SCRIPTED_MARKER}` : '';
  const max = Math.max(10, width - 1);
  const room = max - fixed.length - marker.length - 3;
  // A model name cut to a few letters says nothing (the banner has it in full): drop it instead.
  const model = room >= Math.min(header.model.length, 12) ? ` · ${truncate(header.model, room)}` : '';
  const plain = truncate(fixed + model, max - marker.length);
  if (!style.enabled) return plain + marker;
  const colored = plain.replace(` · ${facts.status} · `, ` · ${colorState(facts.status, style)} · `);
  return colored + (marker ? style.yellow(style.bold(marker)) : '');
}

function colorState(status: string, style: Style): string {
  if (status === 'working') return style.green(status);
  if (status === 'waiting_approval' || status === 'queued') return style.yellow(status);
  if (status === 'failed' || status === 'crashed' || status === 'refused' || status === 'lost')
    return style.red(status);
  return status;
}

/** The first lines of the pane: who this agent is and how to drive it. */
export function formatBanner(header: PaneHeader, style: Style, width: number): string[] {
  const max = Math.max(20, width - 1);
  const parent = header.parentId ? ` · parent ${header.parentId}` : ' · root';
  const first = truncate(
    `flotilla · ${header.id} (${header.name}) · depth ${header.depth}/${header.maxDepth}${parent}`,
    max,
  );
  const model = truncate(`model ${header.model}`, max - (header.scripted ? SCRIPTED_MARKER.length + 1 : 0));
  return [
    style.bold(first),
    model + (header.scripted ? ' ' + style.yellow(style.bold(SCRIPTED_MARKER)) : ''),
    style.dim(truncate('type to talk to the agent · /help for commands · Ctrl-C aborts a turn, twice exits', max)),
  ];
}
