/**
 * What Claude Code and Gemini CLI session files share: JSON lines, a model message's token
 * usage on its line (Claude repeats it on each content block's line), so each message id is
 * counted once and its last line wins.
 */
export function usageByMessage(
  text: string,
  marker: string,
  read: (entry: Record<string, unknown>) => { id: string | undefined; input: number; output: number } | undefined,
): { inputTokens: number; outputTokens: number; turns: number } {
  const seen = new Map<string, { input: number; output: number }>();
  for (const line of text.split('\n')) {
    if (!line.includes(marker)) continue;
    let entry: Record<string, unknown>;
    try { entry = JSON.parse(line) as Record<string, unknown>; } catch { continue; }
    const u = read(entry);
    if (u) seen.set(u.id ?? String(seen.size), { input: u.input, output: u.output });
  }
  let inputTokens = 0;
  let outputTokens = 0;
  for (const u of seen.values()) { inputTokens += u.input; outputTokens += u.output; }
  return { inputTokens, outputTokens, turns: seen.size };
}

/** The one line pasted into an idle CLI's pane for new mail (the turn-start hook attaches the mail itself). */
export function wakeNotice(count: number): string {
  return `[flotilla] ${count} new inbox message${count === 1 ? '' : 's'} — they are attached below as data.`;
}
