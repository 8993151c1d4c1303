import type { SyntaxNode } from './syntax.js';
import { evaluateWord, literalWord, type Word } from './words.js';

/**
 * A command's words as bash splits them. bash ends a word only at unquoted blanks and
 * operators, but the grammar sometimes ends one early: after `$'…'` it starts a new word at
 * a backslash (`$'a'\,b` is one word to bash), and `$"…"` (a translated string) comes out as
 * a `$` and a string. Nodes that touch in the source are one word, joined here; the
 * differential fuzz test against bash (test/policy/shell/fuzz.test.ts) finds such splits.
 */
export class WordJoiner {
  /** Words of the bash words before the current one. */
  private done: Word[] = [];
  /** The current bash word: one per brace alternative so far. */
  private group: Word[] = [];
  private end = -1;
  /** The last node was a lone `$` (the grammar gives it the text before it too: `-f$`). */
  private dollar = false;

  constructor(
    private readonly source: string,
    /** The grammar split the words in a way the joiner cannot mend. */
    private readonly misread: (why: string) => void,
  ) {}

  /** The command's words; an unquoted word brace expansion leaves empty is no word (`{,x}` is `x`). */
  get words(): Word[] {
    return [...this.done, ...this.group].filter((w) => !(w.braced && w.value === '' && !/['"]/.test(w.raw)));
  }

  /** Any other part of the command (a redirection, a prefix assignment): words do not join across it. */
  skip(outer: SyntaxNode): void {
    this.gap(outer);
    this.close();
    this.dollar = false;
    this.end = outer.endIndex;
  }

  /** `outer` is the node as placed in the command (for its extent), `node` the one to evaluate. */
  add(outer: SyntaxNode, node: SyntaxNode): void {
    this.gap(outer);
    const words = node.type === '$' ? [literalWord(node.text)] : evaluateWord(node, this.source);
    const touches = outer.startIndex === this.end && this.group.length > 0;
    if (!touches) {
      this.close();
      this.group = words;
    } else {
      // `$"…"`: the `$` only marks the string as translated.
      if (
        this.dollar &&
        (node.type === 'string' || (node.type === 'concatenation' && node.child(0)?.type === 'string'))
      )
        this.group = this.group.map(dropLast);
      // Brace alternatives on either side multiply, as bash expands the whole word.
      if (this.group.length * words.length > 256)
        this.misread('a word the bash grammar splits where bash does not expands to too many words');
      this.group = this.group.flatMap((a) => words.map((b) => join(a, b)));
    }
    this.dollar = node.type === '$';
    this.end = outer.endIndex;
  }

  private close(): void {
    this.done.push(...this.group);
    this.group = [];
  }

  /**
   * Between two parts of a simple command bash sees only blanks. Anything else there (the
   * grammar drops `\ ` before `$''`), or a word that starts with a newline (after `$""` the
   * grammar runs a word on to the next line), means the grammar read other words than bash.
   */
  private gap(outer: SyntaxNode): void {
    if (this.end >= 0 && outer.startIndex > this.end && !/^[ \t]+$/.test(this.source.slice(this.end, outer.startIndex)))
      this.misread('the bash grammar reads other words here than bash does');
    if (/^\s/.test(outer.text)) this.misread('the bash grammar runs a word across a line break');
  }
}

const dropLast = (w: Word): Word => ({
  ...w,
  value: w.value?.slice(0, -1),
  symbolic: w.symbolic.slice(0, -1),
  glob: w.glob.slice(0, -1),
  raw: w.raw.slice(0, -1),
});

function join(a: Word, b: Word): Word {
  return {
    value: a.value !== undefined && b.value !== undefined ? a.value + b.value : undefined,
    symbolic: a.symbolic + b.symbolic,
    glob: a.glob + b.glob,
    hasGlob: a.hasGlob || b.hasGlob,
    braced: a.braced || b.braced,
    raw: a.raw + b.raw,
  };
}
