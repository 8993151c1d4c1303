#!/usr/bin/env node
// Installs the vendor CLIs the runtime tests drive (§13), at the pinned versions in
// runtime-pins.json, into a cache folder — never into this project's dependencies:
//   $FLOTILLA_RUNTIME_CACHE (default ~/.cache/flotilla/runtimes)/<name>-<version>/
// Usage: node tools/install-runtimes.mjs [claude|codex|gemini ...]   (default: all)
// Prints one line per runtime: "<name> <path to binary>" or "<name> FAILED <reason>".
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const pins = JSON.parse(readFileSync(new URL('./runtime-pins.json', import.meta.url), 'utf8'));
const cache = process.env.FLOTILLA_RUNTIME_CACHE || join(homedir(), '.cache', 'flotilla', 'runtimes');
const wanted = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(pins);
let failed = 0;
for (const name of wanted) {
  const pin = pins[name];
  if (!pin) { console.log(`${name} FAILED unknown runtime`); failed++; continue; }
  const dir = join(cache, `${name}-${pin.version}`);
  const bin = join(dir, 'node_modules', '.bin', pin.bin);
  if (!existsSync(bin)) {
    mkdirSync(dir, { recursive: true });
    try {
      execFileSync('npm', ['install', '--prefix', dir, '--no-save', '--no-audit', '--no-fund', '--loglevel=error', `${pin.package}@${pin.version}`], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 600_000 });
    } catch (err) {
      console.log(`${name} FAILED npm install ${pin.package}@${pin.version}: ${String(err.stderr ?? err.message).trim().split('\n').pop()}`);
      failed++;
      continue;
    }
  }
  console.log(existsSync(bin) ? `${name} ${bin}` : `${name} FAILED ${bin} missing after install`);
}
process.exitCode = failed ? 1 : 0;
