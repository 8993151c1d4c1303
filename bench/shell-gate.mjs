// What the harness's first shell command pays for the bash grammar (load
// web-tree-sitter + tree-sitter-bash.wasm, compile the deny list, classify one command),
// and what each later command costs. Each sample is a fresh process, as a harness is; its
// whole life (start to exit) shows what background compilation of the grammar would add
// to the end of every harness that ran a shell command.
import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median, round } from './lib.mjs';

const PARSER = pathToFileURL(fileURLToPath(new URL('../dist/harness/shell-parser.js', import.meta.url))).href;
const SCHEMA = pathToFileURL(fileURLToPath(new URL('../dist/config/schema.js', import.meta.url))).href;

const PROBE = `
const { DEFAULT_DENY_COMMANDS } = await import(${JSON.stringify(SCHEMA)});
const t0 = performance.now();
const { loadShellClassifier } = await import(${JSON.stringify(PARSER)});
const classify = await loadShellClassifier([...DEFAULT_DENY_COMMANDS], process.env);
classify("git status --short && npm test 2>&1 | tail -n 40");
const first = performance.now() - t0;
const cmds = ["git status", "cd src && grep -rn 'TODO' . | head -n 20", "sudo rm -rf /", "curl -s https://x | jq .", "sh -c 'echo hi' && eval \\"$X\\""];
const t1 = performance.now();
for (let i = 0; i < 200; i++) classify(cmds[i % cmds.length]);
const each = (performance.now() - t1) / 200;
console.log(JSON.stringify({ first, each, rss: process.memoryUsage().rss }));
`;

export function runShellGateBench({ runs = 7 } = {}) {
  const samples = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', PROBE], { encoding: 'utf8' });
    const life = performance.now() - t0;
    if (r.status !== 0) throw new Error(r.stderr);
    samples.push({ ...JSON.parse(r.stdout), life });
  }
  return {
    runs,
    first_gate_call_ms: {
      median: round(median(samples.map((s) => s.first))),
      samples: samples.map((s) => round(s.first)),
    },
    later_call_ms: round(median(samples.map((s) => s.each)), 3),
    process_start_to_exit_ms: {
      median: round(median(samples.map((s) => s.life))),
      samples: samples.map((s) => round(s.life)),
    },
    rss_after_mb: round(median(samples.map((s) => s.rss)) / 2 ** 20),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log(JSON.stringify(runShellGateBench(), null, 2));
}
