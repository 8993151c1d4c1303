import { lex, type Word } from './shell-lex.js';

/**
 * Groups tokens into pipelines of simple commands. Lists (`;`, `&&`, `||`, `&`, newlines)
 * and subshell parentheses separate pipelines; `|` and `|&` join commands into one.
 * Redirection targets are not arguments, but their substitutions still count.
 */

export interface SimpleCommand {
  words: Word[];
  /** Command substitutions found anywhere in the command, including redirection targets. */
  subs: string[];
}

export type Pipeline = SimpleCommand[];

export function parseShell(src: string): Pipeline[] {
  const pipelines: Pipeline[] = [];
  let pipeline: Pipeline = [];
  let command: SimpleCommand = { words: [], subs: [] };
  let redirectTarget = false;

  const endCommand = (): void => {
    if (command.words.length || command.subs.length) pipeline.push(command);
    command = { words: [], subs: [] };
  };
  const endPipeline = (): void => {
    endCommand();
    if (pipeline.length) pipelines.push(pipeline);
    pipeline = [];
  };

  for (const token of lex(src)) {
    if (token.kind === 'word') {
      command.subs.push(...token.word.subs);
      if (redirectTarget) redirectTarget = false;
      else command.words.push(token.word);
    } else if (token.kind === 'redirect') {
      // `>&2` and `2>&1` name a descriptor; the next word is still consumed as the target.
      redirectTarget = true;
    } else if (token.op === '|' || token.op === '|&') {
      endCommand();
    } else {
      endPipeline();
    }
  }
  endPipeline();
  return pipelines;
}
