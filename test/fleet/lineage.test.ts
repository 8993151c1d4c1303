import { mkdirSync, writeFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { childDepth, findParentAgent, forgedParentRefusal } from '../../src/fleet/lineage.js';
import { processStartTime } from '../../src/fleet/proc.js';
import { updateRecord } from '../../src/fleet/registry.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { compileSources, type CompiledSources } from './helpers/compile.js';
import { startFixture, type Fixture } from './helpers/fixture.js';
import { registerAgent } from './helpers/records.js';

let compiled: CompiledSources;
let fleet: TempFleet;
const started: Fixture[] = [];

beforeAll(() => {
  compiled = compileSources(['src/fleet/lineage.ts', 'src/fleet/proc.ts', 'src/layout/layout.ts']);
});
afterAll(() => compiled.cleanup());
afterEach(() => {
  for (const f of started.splice(0)) f.kill('SIGKILL');
  fleet?.cleanup();
});

interface InnerResult {
  parent: string | null;
  forged: string | null;
  ancestors: number[];
}

function env(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, FLOTILLA_TEST_SRC: compiled.srcDir, ...extra };
  for (const [k, v] of Object.entries(extra)) if (v === undefined) delete e[k];
  return e;
}

/** Starts node (outer) → sh → node (inner); `register` runs once the outer pid is known. */
async function chain(
  extraEnv: Record<string, string | undefined>,
  register: (outerPid: number) => void,
): Promise<InnerResult & { outer: number }> {
  const outer = startFixture('lineage-outer.mjs', [fleet.layout.root], env(extraEnv));
  started.push(outer);
  await outer.waitLine(/^ready /);
  register(outer.pid);
  outer.send('go');
  const line = await outer.waitLine(/^\{/);
  return { ...(JSON.parse(line) as InnerResult), outer: outer.pid };
}

function registerLive(id: string, pid: number, extra: { depth?: number; parentId?: string; rootId?: string } = {}) {
  return registerAgent(fleet.layout, id, { pid, pidStartTime: processStartTime(pid), ...extra });
}

describe('lineage', () => {
  it('finds the registered harness two processes up (through sh), without FLOTILLA_AGENT_ID', async () => {
    fleet = tempFleet();
    const r = await chain({ FLOTILLA_AGENT_ID: undefined }, (pid) => registerLive('lead-aaaaaa', pid));
    // A shell really sits between: the outer process is the grandparent.
    expect(r.ancestors.indexOf(r.outer)).toBe(1);
    expect(r).toMatchObject({ parent: 'lead-aaaaaa', forged: null });
  });

  it('accepts FLOTILLA_AGENT_ID when it names that ancestor', async () => {
    fleet = tempFleet();
    const r = await chain({ FLOTILLA_AGENT_ID: 'lead-aaaaaa' }, (pid) => registerLive('lead-aaaaaa', pid));
    expect(r).toMatchObject({ parent: 'lead-aaaaaa', forged: null });
  });

  it('reports FLOTILLA_AGENT_ID naming a live agent that is not an ancestor as forged', async () => {
    fleet = tempFleet();
    const other = startFixture('lineage-outer.mjs', [fleet.layout.root], env());
    started.push(other);
    await other.waitLine(/^ready /);
    registerLive('other-bbbbbb', other.pid);
    const r = await chain({ FLOTILLA_AGENT_ID: 'other-bbbbbb' }, (pid) => registerLive('lead-aaaaaa', pid));
    expect(r).toMatchObject({ parent: 'lead-aaaaaa', forged: 'other-bbbbbb' });
  });

  it('reports an id with no record as forged, and a person with no hint as a root spawn', async () => {
    fleet = tempFleet();
    expect(await chain({ FLOTILLA_AGENT_ID: 'ghost-cccccc' }, () => {})).toMatchObject({
      parent: null,
      forged: 'ghost-cccccc',
    });
    expect(await chain({ FLOTILLA_AGENT_ID: undefined }, () => {})).toMatchObject({ parent: null, forged: null });
  });

  it('ignores a record whose pid was reused (start time differs) or that has ended', async () => {
    fleet = tempFleet();
    const reused = await chain({ FLOTILLA_AGENT_ID: undefined }, (pid) =>
      registerAgent(fleet.layout, 'stale-dddddd', { pid, pidStartTime: String(Number(processStartTime(pid)) + 1) }),
    );
    expect(reused).toMatchObject({ parent: null, forged: null });
    const ended = await chain({ FLOTILLA_AGENT_ID: undefined }, (pid) => {
      registerLive('done-eeeeee', pid);
      updateRecord(fleet.layout, 'done-eeeeee', { status: 'completed' });
    });
    expect(ended).toMatchObject({ parent: null, forged: null });
  });

  it("a process of the shim host is the agent its FLOTILLA_AGENT_ID names; naming none or an ended one, it is no one's, never a person", async () => {
    fleet = tempFleet();
    // The agent's pane process (tools/shim-pane): its record's pid, no ancestor of what the host starts for it.
    const pane = startFixture('lineage-outer.mjs', [fleet.layout.root], env());
    started.push(pane);
    await pane.waitLine(/^ready /);
    registerLive('hosted-ffffff', pane.pid);
    const asHost = (pid: number) => {
      mkdirSync(fleet.layout.doorsDir, { recursive: true });
      writeFileSync(fleet.layout.shimHostPid(pid), `${processStartTime(pid)}\n`);
    };
    expect(await chain({ FLOTILLA_AGENT_ID: 'hosted-ffffff' }, asHost)).toMatchObject({
      parent: 'hosted-ffffff',
      forged: null,
    });
    expect(await chain({ FLOTILLA_AGENT_ID: undefined }, asHost)).toMatchObject({ parent: null, forged: 'shim-host' });
    // Not the host's child: naming that agent is a forgery, as it always was.
    expect(await chain({ FLOTILLA_AGENT_ID: 'hosted-ffffff' }, () => {})).toMatchObject({
      parent: null,
      forged: 'hosted-ffffff',
    });
    updateRecord(fleet.layout, 'hosted-ffffff', { status: 'completed' });
    expect(await chain({ FLOTILLA_AGENT_ID: 'hosted-ffffff' }, asHost)).toMatchObject({
      parent: null,
      forged: 'hosted-ffffff',
    });
  });

  it('the nearest agent wins over a farther one named in FLOTILLA_AGENT_ID (no escaping the depth limit)', async () => {
    fleet = tempFleet();
    // This test process is the root agent; the outer fixture is its child at depth 1.
    registerLive('root-ffffff', process.pid);
    const r = await chain({ FLOTILLA_AGENT_ID: 'root-ffffff' }, (pid) =>
      registerLive('mid-gggggg', pid, { depth: 1, parentId: 'root-ffffff', rootId: 'root-ffffff' }),
    );
    expect(r).toMatchObject({ parent: 'mid-gggggg', forged: null });
  });

  it('a harness asking in-process is its own parent; the forged refusal is one line with a bracket', () => {
    fleet = tempFleet();
    expect(findParentAgent(fleet.layout, { env: {} }).parent).toBeNull();
    registerLive('self-hhhhhh', process.pid, { depth: 2 });
    const found = findParentAgent(fleet.layout, { env: { FLOTILLA_AGENT_ID: 'self-hhhhhh' } });
    expect(found.parent?.id).toBe('self-hhhhhh');
    expect(childDepth(found.parent)).toBe(3);
    expect(childDepth(null)).toBe(0);
    const err = forgedParentRefusal('x');
    expect(err.message).toMatch(
      /^spawn refused: FLOTILLA_AGENT_ID names 'x', which is not an ancestor of this process — /,
    );
    expect(err.message).not.toContain('\n');
    expect(err.bracket).toBe('[flotilla:forged-parent id=x]');
  });
});
