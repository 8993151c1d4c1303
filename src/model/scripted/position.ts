import type { LanguageModelV3Message, LanguageModelV3Prompt, LanguageModelV3ToolResultOutput } from '@ai-sdk/provider';
import type { Guard, Script } from './script.js';

/**
 * Where a script is, derived from the prompt alone. A model is called with the whole history
 * every time, so the scripted model replays its own choices over that history instead of
 * keeping counters: a resumed transcript, a second process or a restarted run continues
 * exactly where the conversation is.
 */

export type InputKind = 'user' | 'inbox' | 'tool_result' | 'tool_error';

/** What the model is answering: everything after its own last message. */
export interface PromptView {
  /** 1-based number of the reply being produced (assistant messages so far + 1). */
  turn: number;
  kinds: Set<InputKind>;
  /** Tools whose results are in the latest input. */
  tools: Set<string>;
  /** Text of the latest input, messages joined by blank lines. */
  lastMessage: string;
  lastToolResult: string;
  lastUser: string;
  task: string;
}

export function outputText(o: LanguageModelV3ToolResultOutput): string {
  switch (o.type) {
    case 'text':
    case 'error-text':
      return o.value;
    case 'json':
    case 'error-json':
      return JSON.stringify(o.value);
    case 'execution-denied':
      return o.reason ?? 'execution denied';
    case 'content':
      return o.value.map((v) => (v.type === 'text' ? v.text : '')).join('');
  }
}

function userText(m: Extract<LanguageModelV3Message, { role: 'user' }>): string {
  return m.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

/** The view of a prompt prefix (messages before the reply being chosen). */
export function viewOf(prompt: LanguageModelV3Prompt): PromptView {
  let lastAssistant = -1;
  let turn = 1;
  prompt.forEach((m, i) => {
    if (m.role === 'assistant') {
      lastAssistant = i;
      turn++;
    }
  });
  const view: PromptView = {
    turn,
    kinds: new Set(),
    tools: new Set(),
    lastMessage: '',
    lastToolResult: '',
    lastUser: '',
    task: '',
  };
  const latest: string[] = [];
  prompt.forEach((m, i) => {
    const isLatest = i > lastAssistant;
    if (m.role === 'user') {
      const text = userText(m);
      if (!view.task) view.task = text;
      view.lastUser = text;
      if (isLatest) {
        view.kinds.add(text.includes('<inbox-message') ? 'inbox' : 'user');
        latest.push(text);
      }
    } else if (m.role === 'tool') {
      for (const p of m.content) {
        if (p.type !== 'tool-result') continue;
        const text = outputText(p.output);
        view.lastToolResult = text;
        if (isLatest) {
          view.kinds.add('tool_result');
          if (p.output.type === 'error-text' || p.output.type === 'error-json' || p.output.type === 'execution-denied')
            view.kinds.add('tool_error');
          view.tools.add(p.toolName);
          latest.push(text);
        }
      }
    }
  });
  view.lastMessage = latest.join('\n\n');
  return view;
}

export function guardMatches(when: Guard | undefined, view: PromptView): boolean {
  if (!when) return true;
  if (when.contains !== undefined && !view.lastMessage.includes(when.contains)) return false;
  if (when.matches !== undefined && !new RegExp(when.matches).test(view.lastMessage)) return false;
  if (when.kind !== undefined) {
    const kinds = Array.isArray(when.kind) ? when.kind : [when.kind];
    if (!kinds.some((k) => view.kinds.has(k))) return false;
  }
  if (when.tool !== undefined && !view.tools.has(when.tool)) return false;
  return true;
}

/** The first reply, in file order, that is still available and whose guard matches. */
function pick(script: Script, view: PromptView, used: Set<number>): number | undefined {
  for (let i = 0; i < script.replies.length; i++) {
    const r = script.replies[i]!;
    if (!r.repeat && used.has(i)) continue;
    if (guardMatches(r.when, view)) return i;
  }
  return undefined;
}

/**
 * Chooses the reply for the whole prompt: replays the choice at each earlier assistant
 * message to learn which replies are used, then picks for the current input.
 * Returns undefined when the script is exhausted.
 */
export function chooseReply(
  script: Script,
  prompt: LanguageModelV3Prompt,
): { index: number | undefined; view: PromptView } {
  const used = new Set<number>();
  prompt.forEach((m, i) => {
    if (m.role !== 'assistant') return;
    const earlier = pick(script, viewOf(prompt.slice(0, i)), used);
    if (earlier !== undefined) used.add(earlier);
  });
  const view = viewOf(prompt);
  return { index: pick(script, view, used), view };
}
