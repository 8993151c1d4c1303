import type { TaskChatAction } from './parse.js';

/**
 * What chat commands do (§6 "Chat commands"). The pane parses a line into a `ChatCommand`
 * and `runChat` calls one method here; the session engine wires the real implementations.
 * Every method returns the text to print (one or more lines) or throws a `FlotillaError`
 * whose message is printed as one line.
 */
export interface ChatActions {
  /** Definition names `@<name>` may address; `@` anything else goes to the model unchanged. */
  definitions(): Promise<string[]>;
  /** `/agent list`: the definitions that can be spawned, one line each. */
  list(): Promise<string>;
  /** `/agent spawn <name> <prompt>` (`/agent bg` sets background; `@<name> <prompt>` does not). */
  spawn(name: string, prompt: string, opts: { background: boolean }): Promise<string>;
  /** `/agent status`: this agent's children (or the tree), like `flotilla status`. */
  status(): Promise<string>;
  /** `/agent cancel <id-prefix>`. */
  cancel(prefix: string): Promise<string>;
  /** `/agent resume <id-prefix> <prompt>`. */
  resume(prefix: string, prompt: string): Promise<string>;
  /** `/agent approve <id>`: a pending approval or secret request (§11). */
  approve(id: string): Promise<string>;
  /** `/agent deny <id> [reason]`. */
  deny(id: string, reason?: string): Promise<string>;
  /** `/agent output <id>`: a finished agent's final answer. */
  output(id: string): Promise<string>;
  /** `/agent collect`: the final answers of all finished, uncollected agents. */
  collect(): Promise<string>;
  /** `/send <to> <text>`. */
  send(to: string, text: string): Promise<string>;
  /** `/inbox`: this agent's messages (peek). */
  inbox(): Promise<string>;
  /** `/tasks`: this agent's board (§15). */
  tasks(): Promise<string>;
  /**
   * `/task add <title>` (arg: the title), `/task <show|done|fail|cancel|release> <id> [text]`, as the person typing.
   */
  task(action: TaskChatAction, arg: string, text: string): Promise<string>;
}

/** The line printed for a command whose backing feature is not built yet: `/agent resume is not yet available`. */
export function notYetAvailable(command: string): string {
  return `${command} is not yet available`;
}

/**
 * Actions that all answer `notYetAvailable`: a base the engine spreads its real methods over,
 * so a missing feature prints a clear line instead of failing to compile or crashing.
 */
export function unavailableChatActions(definitions: readonly string[] = []): ChatActions {
  const na = (command: string) => () => Promise.resolve(notYetAvailable(command));
  return {
    definitions: () => Promise.resolve([...definitions]),
    list: na('/agent list'),
    spawn: na('/agent spawn'),
    status: na('/agent status'),
    cancel: na('/agent cancel'),
    resume: na('/agent resume'),
    approve: na('/agent approve'),
    deny: na('/agent deny'),
    output: na('/agent output'),
    collect: na('/agent collect'),
    send: na('/send'),
    inbox: na('/inbox'),
    tasks: na('/tasks'),
    task: na('/task'),
  };
}
