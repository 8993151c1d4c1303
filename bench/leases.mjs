// What a file lease adds to an edit (docs/design.md §16): our write/edit tools and a vendor
// CLI's pre-tool hook call leaseForEdit before a file changes. Measured in one process against a
// real fleet root and a registered, live holder (this process), as a harness or a hook process
// would see it: the first edit of a file takes the lease (lock, read, atomic write, audit line);
// later edits of a file the agent holds take the fast path (one read, no lock). Then `lease take`
// → `lease release` of one file, as `flotilla lease` and the lease tools call them (team-store/leases.ts),
// p50/p99 each.
// Once per bus (bench/buses.mjs), so it measures whatever store the leases use on it:
//   node bench/leases.mjs [--buses maildir,nats] [--nats nats://host:port]
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { busEnv, withBuses } from './buses.mjs';
import { percentile, round, tempProject } from './lib.mjs';

const dist = (p) => new URL(`../dist/${p}`, import.meta.url).href;

export async function runLeaseBench({ buses, nats, ...opts } = {}) {
  const out = { load_average: (await import('node:os')).loadavg().map((x) => round(x, 1)) };
  Object.assign(out, await withBuses({ buses, nats }, (bus) => leaseBench({ ...opts, bus })));
  out.load_average_after = (await import('node:os')).loadavg().map((x) => round(x, 1));
  return out;
}

async function leaseBench({ firstTakes = 200, heldEdits = 2000, hookCalls = 2000, cycles = 200, bus }) {
  // This process is the fleet's holder: its config (the bus) is what a harness's would be.
  const saved = { ...process.env };
  Object.assign(process.env, busEnv(bus));
  // The lease operations every door calls (team-store/leases.ts): files on maildir, the fleet's LEASES bucket on
  // nats://.
  const [
    { layoutFor, ensureState },
    { createRecord },
    { processStartTime },
    { leaseForEdit, takeByName, releaseByName },
    { vendorLeaseCheck },
    { claude },
    { runAtExit },
  ] = await Promise.all([
    import(dist('layout/layout.js')),
    import(dist('fleet/registry.js')),
    import(dist('fleet/proc.js')),
    import(dist('team-store/leases.js')),
    import(dist('harness/cli-host/lease-check.js')),
    import(dist('runtimes/claude.js')),
    import(dist('at-exit.js')),
  ]);
  const project = tempProject('flotilla-bench-leases-');
  try {
    const layout = layoutFor(project.root, project.dir);
    ensureState(layout);
    const id = 'bench-holder';
    const now = new Date().toISOString();
    createRecord(layout, {
      id,
      name: 'bench',
      parentId: null,
      rootId: id,
      depth: 0,
      pid: process.pid,
      pidStartTime: processStartTime(process.pid),
      tmux: null,
      cwd: project.dir,
      worktree: null,
      mode: 'interactive',
      status: 'working',
      exitReason: null,
      createdAt: now,
      startedAt: now,
      finishedAt: null,
      turns: 0,
      maxTurns: 20,
      timeoutSecs: 600,
      usage: { inputTokens: 0, outputTokens: 0, costUsd: null },
      lastLine: '',
      model: 'script:bench.yaml',
      scripted: true,
      permissionMode: 'dont_ask',
      effectivePolicy: { tools: ['write', 'edit'], permissionMode: 'dont_ask', secrets: [] },
      background: false,
      resumedFrom: null,
      spawnedBy: 'human',
    });
    const file = (k) => {
      const f = join(project.dir, `f${k}.txt`);
      writeFileSync(f, 'x\n');
      return f;
    };
    const time = async (fn) => {
      const t0 = process.hrtime.bigint();
      await fn();
      return Number(process.hrtime.bigint() - t0) / 1000;
    };
    const first = [];
    const files = Array.from({ length: firstTakes }, (_, k) => file(k));
    for (const f of files) first.push(await time(() => leaseForEdit(layout, f, id, 1, 'edit')));
    const held = [];
    for (let i = 0; i < heldEdits; i++) held.push(await time(() => leaseForEdit(layout, files[i % 10], id, 1, 'edit')));
    const hook = [];
    const rec = { id, cwd: project.dir, task: 1 };
    for (let i = 0; i < hookCalls; i++) {
      const input = { file_path: files[i % 10], content: 'y\n' };
      hook.push(
        await time(() =>
          vendorLeaseCheck(layout, claude, rec, { tool: 'write', input }, { cwd: project.dir }, process.env),
        ),
      );
    }
    // Take → release of one more file, again and again (the other leases still held).
    const take = [];
    const release = [];
    const one = file(firstTakes);
    for (let i = 0; i < cycles; i++) {
      take.push(
        await time(async () => {
          const r = await takeByName(layout, { by: id, cwd: project.dir, paths: [one], why: 'bench' });
          if (!r.outcome.ok) throw new Error(`take refused: ${r.text}`);
        }),
      );
      release.push(await time(() => releaseByName(layout, id, project.dir, [one])));
    }
    const stats = (v) => ({ p50_us: round(percentile(v, 50)), p99_us: round(percentile(v, 99)) });
    return {
      first_edit_of_a_file: stats(first),
      edit_of_a_held_file: stats(held),
      vendor_hook_held_file: stats(hook),
      leases_held: firstTakes,
      lease_take: stats(take),
      lease_release: stats(release),
      take_release_cycles: cycles,
    };
  } finally {
    await runAtExit();
    project.cleanup();
    for (const k of Object.keys(busEnv(bus)))
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const arg = (flag) => {
    const i = args.indexOf(flag);
    return i === -1 ? undefined : args[i + 1];
  };
  console.log(
    JSON.stringify(
      await runLeaseBench({
        ...(arg('--buses') ? { buses: arg('--buses').split(',') } : {}),
        ...(arg('--nats') ? { nats: arg('--nats') } : {}),
      }),
      null,
      2,
    ),
  );
}
