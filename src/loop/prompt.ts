import type {
  LanguageModelV3FilePart,
  LanguageModelV3FunctionTool,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3ToolResultOutput,
} from '@ai-sdk/provider';
import { z } from 'zod';
import type { Tool } from '../tools/types.js';
import type { ModelMessage } from './types.js';

/**
 * Converts AI SDK messages (what transcripts store) into the provider-level prompt a
 * LanguageModelV3 takes. The loop calls models directly rather than through `streamText`
 * so that it alone decides how tool calls are validated, gated and answered.
 */
export function toModelPrompt(system: string, messages: readonly ModelMessage[]): LanguageModelV3Prompt {
  const prompt: LanguageModelV3Prompt = [];
  if (system.length > 0) prompt.push({ role: 'system', content: system });
  for (const m of messages) {
    const converted = convertMessage(m);
    if (converted) prompt.push(converted);
  }
  return prompt;
}

function convertMessage(m: ModelMessage): LanguageModelV3Message | undefined {
  const providerOptions = m.providerOptions ? { providerOptions: m.providerOptions } : {};
  switch (m.role) {
    case 'system':
      return { role: 'system', content: m.content, ...providerOptions };
    case 'user': {
      if (typeof m.content === 'string')
        return { role: 'user', content: [{ type: 'text', text: m.content }], ...providerOptions };
      const content = m.content.map((p) => {
        if (p.type === 'text') return p;
        if (p.type === 'image') return fileOf(p.image, p.mediaType ?? 'image/*', p.providerOptions);
        return { ...fileOf(p.data, p.mediaType, p.providerOptions), ...(p.filename ? { filename: p.filename } : {}) };
      });
      return { role: 'user', content, ...providerOptions };
    }
    case 'assistant': {
      if (typeof m.content === 'string')
        return { role: 'assistant', content: [{ type: 'text', text: m.content }], ...providerOptions };
      const content: Extract<LanguageModelV3Message, { role: 'assistant' }>['content'] = [];
      for (const p of m.content) {
        if (p.type === 'text' || p.type === 'reasoning' || p.type === 'tool-call') content.push(p);
        else if (p.type === 'tool-result') content.push({ ...p, output: convertOutput(p.output) });
        else if (p.type === 'file') content.push(fileOf(p.data, p.mediaType, p.providerOptions));
        // Tool approval requests belong to streamText's approval flow, which the loop does not use.
      }
      return { role: 'assistant', content, ...providerOptions };
    }
    case 'tool': {
      const content: Extract<LanguageModelV3Message, { role: 'tool' }>['content'] = [];
      for (const p of m.content) {
        if (p.type === 'tool-result') content.push({ ...p, output: convertOutput(p.output) });
      }
      return content.length > 0 ? { role: 'tool', content, ...providerOptions } : undefined;
    }
  }
}

function fileOf(
  data: string | Uint8Array | ArrayBuffer | URL,
  mediaType: string,
  providerOptions: LanguageModelV3FilePart['providerOptions'],
): LanguageModelV3FilePart {
  const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : data;
  return { type: 'file', data: bytes, mediaType, ...(providerOptions ? { providerOptions } : {}) };
}

type MessageToolOutput = Extract<
  Extract<ModelMessage, { role: 'tool' }>['content'][number],
  { type: 'tool-result' }
>['output'];

function convertOutput(output: MessageToolOutput): LanguageModelV3ToolResultOutput {
  if (output.type !== 'content') return output;
  return {
    ...output,
    value: output.value.map((v) =>
      // 'media' is the AI SDK's deprecated spelling of file data.
      v.type === 'media' ? { type: 'file-data' as const, data: v.data, mediaType: v.mediaType } : v,
    ),
  } as LanguageModelV3ToolResultOutput;
}

/** The tool definitions shown to the model: name, description and the input's JSON schema. */
export function toModelTools(tools: readonly Tool[]): LanguageModelV3FunctionTool[] {
  return tools.map((t) => ({
    type: 'function',
    name: t.name,
    description: t.description,
    inputSchema: z.toJSONSchema(t.inputSchema, {
      target: 'draft-7',
      io: 'input',
      unrepresentable: 'any',
    }) as LanguageModelV3FunctionTool['inputSchema'],
  }));
}
