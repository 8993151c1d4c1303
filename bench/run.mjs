// `npm run bench`: every §14 figure, measured on this machine in one run. Prints JSON and
// writes bench/results/latest.json (not committed); docs/benchmarks.md records the figures.
// `npm run bench -- runtimes scale`: only the parts named (the keys below).
import { mkdirSync, writeFileSync } from 'node:fs';
import { existsSync } from 'node:fs';

const parts = [
  ['cold_start', './cold-start.mjs', 'runColdStartBench'],
  ['hot_commands', './hot-commands.mjs', 'runHotCommandsBench'],
  ['inbox', './inbox.mjs', 'runInboxBench'],
  ['spawn', './spawn.mjs', 'runSpawnBench'],
  ['idle_agents', './idle.mjs', 'runIdleBench'],
  ['scale', './scale.mjs', 'runScaleBench'],
  ['surfacing', './surfacing.mjs', 'runSurfacingBench'],
  ['shell_gate', './shell-gate.mjs', 'runShellGateBench'],
  ['tool_command_containment', './namespace.mjs', 'runNamespaceBench'],
  ['runtimes', './runtime.mjs', 'runRuntimeBench'],
  ['file_leases', './leases.mjs', 'runLeaseBench'],
  ['task_board', './board.mjs', 'runBoardBench'],
  ['remote_spawn', './remote-spawn.mjs', 'runRemoteSpawnBench'],
  ['dashboard_hosts', './dashboard-hosts.mjs', 'runDashboardHostsBench'],
  ['bus', './bus.mjs', 'runBusBench'],
  ['audit_bus', './audit-bus.mjs', 'runAuditBusBench'],
  ['status_unread_bus', './status-unread-bus.mjs', 'runStatusUnreadBusBench'],
  ['review', './review.mjs', 'runReviewBench'],
  ['in_place_status', './in-place-status.mjs', 'runInPlaceStatusBench'],
];

const only = process.argv.slice(2);
const unknown = only.filter((k) => !parts.some(([key]) => key === k));
if (unknown.length) {
  process.stderr.write(
    `bench: no part named ${unknown.join(', ')} — name some of: ${parts.map(([key]) => key).join(', ')}\n`,
  );
  process.exit(2);
}
const results = {
  machine: { node: process.version, cpus: (await import('node:os')).cpus().length, date: new Date().toISOString() },
};
for (const [key, file, fn] of parts) {
  if (!existsSync(new URL(file, import.meta.url)) || (only.length && !only.includes(key))) continue;
  process.stderr.write(`bench: ${key}…\n`);
  const t0 = performance.now();
  try {
    const mod = await import(file);
    results[key] = await mod[fn]();
  } catch (err) {
    results[key] = { error: String(err && err.message ? err.message : err) };
    process.exitCode = 1;
  }
  process.stderr.write(`bench: ${key} done in ${Math.round((performance.now() - t0) / 1000)} s\n`);
}
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(new URL('./results/latest.json', import.meta.url), JSON.stringify(results, null, 2) + '\n');
console.log(JSON.stringify(results, null, 2));
if (results.scale && !results.scale.error)
  console.log('\n' + (await import('./scale.mjs')).formatScaleTable(results.scale));
if (results.runtimes && !results.runtimes.error)
  console.log('\n' + (await import('./runtime.mjs')).formatRuntimeTables(results.runtimes, results.machine));
