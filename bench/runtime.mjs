// Vendor runtimes (§13): runs bench/runtime-vendors.ts with vitest (it reuses the TypeScript
// test helpers: fake vendor APIs, vendor fleet; no network) and returns what it wrote.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export async function runRuntimeBench() {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const r = spawnSync('npx', ['vitest', 'run', '--config', 'bench/vitest.runtime.config.ts'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (r.status !== 0) throw new Error(`runtime bench failed (exit ${r.status})`);
  return JSON.parse(readFileSync(new URL('./results/runtimes.json', import.meta.url), 'utf8'));
}

const TITLES = { claude: 'Claude Code', codex: 'Codex', gemini: 'Gemini CLI' };
const pp = (f) => (f && Number.isFinite(f.p50) ? `${f.p50.toLocaleString('en')} / ${f.p95.toLocaleString('en')}` : '—');

/**
 * The runtime figures as Markdown, ready for docs/benchmarks.md: for each runtime the fleet's
 * start against the bare CLI's, mail to an idle CLI and the shim's memory,
 * then where the fleet's start-up time goes, span by span.
 */
/** The shim host's memory with one idle agent, with two, and the difference: what one more vendor agent costs. */
function hostCell(s) {
  if (!s.shim_host_one_agent?.all.length) return '—';
  const two = s.shim_host_two_agents?.all.length
    ? `; ${s.shim_host_two_agents.p50} (${s.shim_host_two_agents_private.p50}); +${s.shim_host_per_agent.p50}`
    : '';
  return `${s.shim_host_one_agent.p50} (${s.shim_host_one_agent_private.p50})${two}`;
}

export function formatRuntimeTables(r, machine = {}) {
  const names = Object.keys(r).filter((k) => k !== 'machine');
  const m = r.machine ?? {};
  const out = [
    `${names.map((n) => r[n].runs)[0] ?? '?'} runs per runtime, ${machine.date ?? new Date().toISOString()}, ${m.cpus ?? '?'} cores, Node ${m.node ?? process.version}, load average before ${(m.load_before ?? []).join(' ')}, after ${(m.load_after ?? []).join(' ')}. ms as p50 / p95; MB as p50.`,
    '',
    "| runtime | load avg | spawn-agent → first model request | bare CLI, interactive in tmux → first model request | fleet − bare, per run | fleet ÷ bare, per run | mail → idle CLI's model request (from send called) | pane process RSS (private) | shim host RSS (private): one agent; two; per agent | shim host, idle 30 s | idle `node -e` RSS (private) | CLI RSS |",
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const n of names) {
    const x = r[n];
    const s = x.rss_mb;
    const load = x.load_average ? `${x.load_average.before[0]}–${x.load_average.after[0]}` : '—';
    const ratio = x.fleet_over_bare ? `${x.fleet_over_bare.p50} / ${x.fleet_over_bare.p95}` : '—';
    out.push(
      `| ${TITLES[n] ?? n} ${x.version} | ${load} | ${pp(x.spawn_to_first_model_call_ms)} | ${pp(x.bare_cli_to_first_model_call_ms)} (\`${x.bare_cli_to_first_model_call_ms.argv}\`) | ${pp(x.fleet_minus_bare_ms)} | ${ratio} | ${pp(x.mail_into_idle_cli_ms)}${x.mail_from_send_called_ms ? ` (${pp(x.mail_from_send_called_ms)})` : ''} | ${s.pane_process.p50} (${s.pane_process_private.p50}) | ${hostCell(s)} | ${s.shim_host_settled_30s?.all.length ? `${s.shim_host_settled_30s.p50} (${s.shim_host_settled_30s_private.p50})` : '—'} | ${s.idle_node?.p50 ?? '—'} (${s.idle_node_private?.p50 ?? '—'}) | ${s.cli.p50} |`,
    );
  }
  const again = names.filter((n) => r[n].second_start);
  if (again.length) {
    out.push(
      '',
      '| second start of each run (the bare CLI in the home its first start made; a second agent in the fleet) | spawn-agent → first model request | bare CLI → first model request | fleet − bare, per run | fleet ÷ bare, per run |',
      '|---|---|---|---|---|',
    );
    for (const n of again) {
      const x = r[n].second_start;
      out.push(
        `| ${TITLES[n] ?? n} ${r[n].version} | ${pp(x.spawn_to_first_model_call_ms)} | ${pp(x.bare_cli_to_first_model_call_ms)} | ${pp(x.fleet_minus_bare_ms)} | ${x.fleet_over_bare.p50} / ${x.fleet_over_bare.p95} |`,
      );
    }
  }
  const labels = [...new Set(names.flatMap((n) => Object.keys(r[n].where_the_time_goes_ms ?? {})))];
  out.push(
    '',
    `| where the fleet's start goes (ms, p50 / p95) | ${names.map((n) => TITLES[n] ?? n).join(' | ')} |`,
    `|---|${names.map(() => '---').join('|')}|`,
  );
  for (const l of labels) out.push(`| ${l} | ${names.map((n) => pp(r[n].where_the_time_goes_ms?.[l])).join(' | ')} |`);
  if (again.length) {
    out.push(
      '',
      `| where the second agent's start goes (ms, p50 / p95) | ${again.map((n) => TITLES[n] ?? n).join(' | ')} |`,
      `|---|${again.map(() => '---').join('|')}|`,
    );
    for (const l of labels)
      out.push(`| ${l} | ${again.map((n) => pp(r[n].second_start.where_the_time_goes_ms?.[l])).join(' | ')} |`);
  }
  const mail = [...new Set(names.flatMap((n) => Object.keys(r[n].where_the_mail_time_goes_ms ?? {})))];
  if (mail.length) {
    out.push(
      '',
      `| where an idle CLI's mail time goes (ms, p50 / p95) | ${names.map((n) => TITLES[n] ?? n).join(' | ')} |`,
      `|---|${names.map(() => '---').join('|')}|`,
    );
    for (const l of mail)
      out.push(`| ${l} | ${names.map((n) => pp(r[n].where_the_mail_time_goes_ms?.[l])).join(' | ')} |`);
  }
  return out.join('\n');
}
