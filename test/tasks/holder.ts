import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

const SCRIPT = fileURLToPath(new URL('../fixtures/tasks/claim-and-lease.yaml', import.meta.url));

/** A fleet in a git project whose agent `holder` claims t1 and leases notes.md, then waits (claim-and-lease.yaml). */
export function holderFleet(): SpawnFleet {
  const f = spawnFleet();
  execFileSync('git', ['init', '-q'], { cwd: f.project });
  writeFileSync(
    join(f.layout.agentsDir, 'holder.md'),
    `---\nname: holder\ndescription: claims t1, leases notes.md\nmodel: script:${SCRIPT}\n---\nYou claim.\n`,
  );
  return f;
}
