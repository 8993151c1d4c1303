import type { AgentRecord } from '../fleet/record.js';
import type { Layout } from '../layout/layout.js';
import { scrubHarnessMarkers } from '../tools/scrub.js';

export type ContextMode = 'none' | 'last_turn' | 'summary';

/**
 * Context a child gets from its parent (§6 `--context`): `last_turn` is the parent's last
 * assistant turn; `summary` asks for a model-written summary, which needs a model call the
 * spawner does not make, so it falls back to the recent turns verbatim (noted in docs).
 */
export async function contextFromParent(
  layout: Layout,
  parent: AgentRecord,
  mode: ContextMode,
  maxTurns: number,
): Promise<string> {
  if (mode === 'none') return '';
  // Loaded only when asked: the transcript reader brings zod, which a plain spawn does without (§14).
  const { readTranscript } = await import('../transcript/reader.js');
  let texts: string[] = [];
  try {
    const t = readTranscript(layout, parent.id);
    for (const e of t.entries) {
      if (e.type !== 'message' || e.message.role !== 'assistant') continue;
      const c = e.message.content;
      const text =
        typeof c === 'string'
          ? c
          : c
              .filter((p) => p.type === 'text')
              .map((p) => (p as { text: string }).text)
              .join('');
      if (text.trim()) texts.push(text.trim());
    }
  } catch {
    return '';
  }
  texts = mode === 'last_turn' ? texts.slice(-1) : texts.slice(-Math.max(1, maxTurns));
  if (texts.length === 0) return '';
  // The parent's words are data to the child: they cannot close this block or open another.
  return `<parent-context from="${parent.id}" mode="${mode}">\n${scrubHarnessMarkers(texts.join('\n\n---\n\n'))}\n</parent-context>\n\n`;
}
