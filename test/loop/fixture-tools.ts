import { z } from 'zod';
import type { Tool } from '../../src/tools/types.js';
import type { LoopEvent } from '../../src/loop/index.js';

/** Real (if tiny) tools for loop tests: each is a schema plus an execute, like the built-ins. */

export const echoTool: Tool<{ text: string }> = {
  name: 'echo',
  description: 'Returns its text',
  inputSchema: z.object({ text: z.string() }),
  klass: 'read',
  execute: async ({ text }) => ({ output: `echo: ${text}` }),
};

/** Sleeps until `ms` passes or the turn is aborted (the contract every tool follows). */
export const napTool: Tool<{ ms: number }> = {
  name: 'nap',
  description: 'Sleeps',
  inputSchema: z.object({ ms: z.number().int().positive() }),
  klass: 'exec',
  execute: ({ ms }, ctx) =>
    new Promise((resolve, reject) => {
      const t = setTimeout(() => resolve({ output: 'rested' }), ms);
      ctx.signal.addEventListener('abort', () => {
        clearTimeout(t);
        reject(new Error('nap interrupted'));
      });
    }),
};

export const failingTool: Tool<Record<string, never>> = {
  name: 'explode',
  description: 'Always throws',
  inputSchema: z.object({}),
  klass: 'exec',
  execute: () => Promise.reject(new Error('kaboom: disk on fire')),
};

export const toolContext = { cwd: process.cwd(), agentId: 'test-agent' };

export async function collect(gen: AsyncGenerator<LoopEvent>): Promise<LoopEvent[]> {
  const events: LoopEvent[] = [];
  for await (const e of gen) events.push(e);
  return events;
}

export function doneOf(events: LoopEvent[]): Extract<LoopEvent, { type: 'done' }> {
  const last = events.at(-1);
  if (last?.type !== 'done') throw new Error(`last event is ${last?.type}, not done`);
  return last;
}

export function fixture(name: string): string {
  return new URL(`../fixtures/scripts/${name}`, import.meta.url).pathname;
}
