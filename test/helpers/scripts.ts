import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Absolute path of a fixture file under test/fixtures/. */
export function fixture(rel: string): string {
  return fileURLToPath(new URL(`../fixtures/${rel}`, import.meta.url));
}

export interface LoggedCall {
  pid: number;
  turn: number;
  reply: number | null;
  tools: string[];
  prompt: { role: string; content: unknown }[];
}

/** The calls a scripted model logged through FLOTILLA_SCRIPT_LOG. */
export function scriptCalls(file: string): LoggedCall[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as LoggedCall);
}

/** The text of every user message in a logged prompt, in order. */
export function userTexts(call: LoggedCall): string[] {
  return call.prompt
    .filter((m) => m.role === 'user')
    .map((m) =>
      typeof m.content === 'string'
        ? m.content
        : (m.content as { type: string; text?: string }[]).map((p) => p.text ?? '').join(''),
    );
}

/** What a tool returned to the model, as the last call it logged shows it. */
export function toolOutput(call: LoggedCall, tool: string): string | undefined {
  const result = call.prompt
    .filter((m) => m.role === 'tool')
    .flatMap((m) => m.content as { toolName: string; output: { value: unknown } }[])
    .find((p) => p.toolName === tool);
  return result ? JSON.stringify(result.output.value) : undefined;
}
