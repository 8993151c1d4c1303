import { fileURLToPath } from 'node:url';
import type { TourEntry } from './person.js';

/**
 * docs/tour.md, written from what the person did and saw in a run of the day
 * (test/scenarios/day.test.ts): `npm run tour` runs the day and writes it. The day's last
 * step checks that the tour still walks the same commands (`tourCommands`).
 */
export interface Places {
  home: string;
  forge: string;
  /** The test's private tmux server, where a person's is the default one. */
  socket: string;
  /** Other text to read as a person's (a second host's home, its bus), in order. */
  also?: readonly (readonly [string, string])[];
}

/** This checkout of Flotilla, where the scripted models and test homes live. */
const REPO = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');

/** Each page's heading and opening. */
export const HEADS = {
  day: `# A tour: one day with a fleet

This is a person's day with Flotilla on the defaults, step by step, with the commands they
typed and what their screen showed. It is written by \`npm run tour\` from a real run of the
scenario test (\`test/scenarios/day.test.ts\`), which asserts every step; only the model
providers are stood in for, by local servers playing scripts (\`test/scenarios/fixtures/model/\`).
The shop repository is \`test/scenarios/fixtures/shop/\`, with its own \`.claude/agents/\`.
The same day with half the team on a second machine: [tour-hosts.md](tour-hosts.md).
`,
  hosts: `# A tour, part 2: the same day on two machines

The day of [tour.md](tour.md) again, with half the team on a second machine, host \`b\`, over a
NATS bus. It is written by \`npm run tour\` from the same run of the scenario test
(\`test/scenarios/day.test.ts\`, step 9): host b is a real sshd on this machine with its own home,
clone and fleet root, and the bus a real \`nats-server\`; only the model providers are stood in
for.
`,
};

/** Paths of the test's machine read as a person's: the home as `~`, the forge as one address. */
export function normalize(text: string, places: Places): string {
  let seen = text;
  for (const [from, to] of places.also ?? []) seen = seen.replaceAll(from, to);
  return (
    seen
      .replaceAll(places.forge, 'https://forge.example/shop.git')
      .replaceAll(places.home, '~')
      .replaceAll(`tmux -L ${places.socket} `, 'tmux ')
      // A path the dashboard cut short (a scripted model's, wherever it was cut), or a scripted model's file in this
      // checkout.
      .replaceAll(`${REPO}/test/scenarios/fixtures/model/`, '')
      .replace(/\S*\.test-home\S*…/g, '~/shop…')
      .replace(/script:\S*…/g, 'script:…')
  );
}

/** The tour as Markdown; `timings`: each step's wall time in this run, listed at the end. */
export function renderTour(
  entries: readonly TourEntry[],
  places: Places,
  timings: readonly { what: string; ms: number }[] = [],
  head: string = HEADS.day,
): string {
  const out = [head];
  let step = '';
  for (const e of entries) {
    if (e.step !== step) {
      step = e.step;
      out.push(`## ${step}\n`);
      if (e.about) out.push(`${e.about}\n`);
    }
    if (e.did) out.push('```console', `$ ${normalize(e.did, places)}`, '```', '');
    if (e.saw) out.push('```text', ...lastLines(normalize(e.saw, places), 30), '```', '');
  }
  if (timings.length) out.push(timeTable(timings));
  return `${out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}

/**
 * The commands and keys of a tour, in order, with the run's own ids made generic: the `$` lines
 * of its console blocks only (a captured screen may show a `$` line of an agent's shell).
 */
export function tourCommands(markdown: string): string[] {
  return [...markdown.matchAll(/^```console\n\$ (.*)$/gm)].map((m) => generic(m[1]!));
}

/** Ids and names that differ from run to run. */
export function generic(text: string): string {
  return text
    .replace(/\b(lead|checker)-[a-z0-9]{6}\b/g, '$1-…')
    .replace(/\bflotilla-shop-[0-9a-f]+\b/g, 'flotilla-shop-…');
}

function lastLines(text: string, n: number): string[] {
  const lines = text.split('\n').map((l) => l.replace(/\s+$/, ''));
  while (lines.length && !lines.at(-1)) lines.pop();
  return lines.length > n ? ['…', ...lines.slice(-n)] : lines;
}

/** "Where the time goes": the run's wall time per step (the suite records it and asserts nothing timed). */
function timeTable(timings: readonly { what: string; ms: number }[]): string {
  const total = timings.reduce((s, x) => s + x.ms, 0);
  return [
    '## Where the time goes\n',
    'Wall time of each step in the run that wrote this page, on the machine that ran it (the suite records it and asserts nothing timed; why each slow step takes its time: [benchmarks.md](benchmarks.md), "The day").\n',
    '| step | seconds |',
    '|---|---:|',
    ...timings.map((x) => `| ${x.what.replace(/\|/g, '\\|')} | ${(x.ms / 1000).toFixed(1)} |`),
    `| **both halves** | **${(total / 1000).toFixed(1)}** |`,
    '',
  ].join('\n');
}
