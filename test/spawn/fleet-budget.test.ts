import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { busFor } from '../../src/bus/open.js';
import { defaultConfig } from '../../src/config/schema.js';
import { isTerminal } from '../../src/fleet/record-status.js';
import { encodeLineage } from '../../src/hosts/lineage.js';
import { hostsOnBus } from './bus-hosts.js';
import { scriptCalls } from '../helpers/scripts.js';
import { eventually } from '../helpers/tmux.js';

// The tree budget across two hosts (docs/design.md §11, §18): two fleet roots sharing one real
// nats-server and fleet name. The tree's root runs on host a; its child on host b spends the
// budget (as a's `spawn-agent --host b` has b open it over ssh: `flotilla spawn --lineage`).
// Only the bus can tell host a what b's agent spent.
const onBus = hostsOnBus('budget:\n  max_tokens_per_tree: 1000\n');

describe('the tree budget across two hosts on a nats:// bus', () => {
  it("a tree whose budget its agent on host b spent: host a refuses the tree's next spawn, naming the budget", async () => {
    const fleet = `budget${randomBytes(4).toString('hex')}`;
    const [a, b] = [
      onBus.host('a', fleet, { root: 'budget-root.yaml', spender: 'budget-spender.yaml' }),
      onBus.host('b', fleet, { spender: 'budget-spender.yaml' }),
    ];
    expect((await a!.spawnAgent(['--id', 'R', '--agent', 'root', '--oneshot', 'work'])).exitCode).toBe(0);
    const root = await eventually(
      () => {
        const r = a!.record('R');
        return r.pid && r.status === 'working' && r.usage.inputTokens > 0 ? r : undefined;
      },
      60_000,
      'the root working',
    );

    // Host b opens the root's child, which spends 2,000 tokens in its one answer and ends.
    const lineage = encodeLineage('a', root, defaultConfig().limits);
    const spend = await b!.flotilla([
      'spawn',
      '--lineage',
      lineage,
      '--agent',
      'spender',
      '--id',
      'b-spend',
      '--oneshot',
      'spend',
    ]);
    expect(spend.stderr).toBe('');
    expect(spend.exitCode).toBe(0);
    await eventually(() => b!.record('b-spend').status === 'completed', 60_000, "b's agent to finish");
    expect(b!.record('b-spend').usage.inputTokens).toBe(2000);
    // Host a has no record of it: only the bus knows what it spent.
    expect(a!.records().map((r) => r.id)).toEqual(['R']);
    const seenFromA = busFor(a!.layout, {
      fleet: { ...defaultConfig().fleet, bus: onBus.url(), name: fleet, host: 'a' },
    }).records;
    await eventually(
      async () => {
        const r = await seenFromA.get('b-spend');
        return r && isTerminal(r.status);
      },
      60_000,
      "b-spend's end on the bus",
    );

    writeFileSync(join(a!.project, 'go'), '');
    const out = await eventually(
      () => {
        const f = join(a!.project, 'out-kid');
        return existsSync(f) && readFileSync(f, 'utf8');
      },
      120_000,
      "the root's spawn to finish",
    );
    expect(out).toContain(
      "budget exhausted: tree 'R' used 2020 of 1000 tokens (budget.max_tokens_per_tree) — raise the budget or start a new tree",
    );
    expect(out).toContain('[flotilla:budget root=R tokens=2020 max=1000]');
    expect(out).toMatch(/exit=1\s*$/);
    expect(a!.records().map((r) => r.id)).toEqual(['R']);
  }, 600_000);

  it("an agent at work on host a is stopped before its next model call once its sibling on host b spent the tree's budget; its parent gets one completion saying so", async () => {
    const fleet = `budget${randomBytes(4).toString('hex')}`;
    const [a, b] = [
      onBus.host('a', fleet, { root: 'budget-parent.yaml', waiter: 'budget-waiter.yaml' }),
      onBus.host('b', fleet, { spender: 'budget-spender.yaml' }),
    ];
    const log = join(a!.project, 'calls.jsonl');
    expect((await a!.spawnAgent(['--id', 'R', '--agent', 'root', 'work'], { FLOTILLA_SCRIPT_LOG: log })).exitCode).toBe(
      0,
    );
    // A, R's child on host a, is in its first tool call, its model called once.
    await eventually(() => existsSync(join(a!.project, 'waiting')), 120_000, 'A waiting in its tool call');
    const pidA = a!.record('A').pid;
    const callsOfA = () => scriptCalls(log).filter((c) => c.pid === pidA);
    expect(callsOfA()).toHaveLength(1);
    await eventually(() => a!.record('R').status === 'idle', 60_000, 'R idle, waiting for mail');

    // Its sibling on host b spends 2,000 of the tree's 1,000 tokens and ends.
    const lineage = encodeLineage('a', a!.record('R'), defaultConfig().limits);
    const spend = await b!.flotilla([
      'spawn',
      '--lineage',
      lineage,
      '--agent',
      'spender',
      '--id',
      'b-spend',
      '--oneshot',
      'spend',
    ]);
    expect(spend.exitCode, spend.stderr).toBe(0);
    await eventually(() => b!.record('b-spend').status === 'completed', 60_000, "b's agent to finish");
    const seenFromA = busFor(a!.layout, {
      fleet: { ...defaultConfig().fleet, bus: onBus.url(), name: fleet, host: 'a' },
    }).records;
    await eventually(
      async () => {
        const r = await seenFromA.get('b-spend');
        return r && isTerminal(r.status);
      },
      60_000,
      "b-spend's end on the bus",
    );

    // A's tool call returns: it ends on the budget, its model never called again.
    writeFileSync(join(a!.project, 'go-on'), '');
    const ended = await eventually(
      () => {
        const r = a!.record('A');
        return isTerminal(r.status) && r;
      },
      120_000,
      'A to end',
    );
    expect(ended).toMatchObject({ status: 'failed', exitReason: 'budget' });
    expect(callsOfA()).toHaveLength(1);
    // R's inbox got one completion from A, saying it failed on the budget.
    const completions = await eventually(
      () => {
        const c = a!.mail('R').filter((m) => m.kind === 'completion' && m.from === 'A');
        return c.length ? c : undefined;
      },
      60_000,
      "A's completion in R's inbox",
    );
    expect(completions).toHaveLength(1);
    expect(completions[0]).toMatchObject({ status: 'failed', exit_reason: 'budget' });
    expect(completions[0]!.body).toContain('finished its task with status **failed**: budget');
    expect(
      a!
        .records()
        .map((r) => r.id)
        .sort(),
    ).toEqual(['A', 'R']);
  }, 600_000);
});
