/** The shell gate on a real bash grammar (§7): verdicts deny / opaque / plain. */
export { createShellClassifier, type ShellClassifier, type ShellVerdict, type ShellVerdictKind } from './classify.js';
export { analyzeShell, type Analysis, type FoundCommand, type OpaquePart } from './analyze.js';
export type { ParsedShell, ShellParser, SyntaxNode } from './syntax.js';
export type { Word } from './words.js';
