import { FlotillaError } from '../errors.js';
import {
  DOOR_BUS_COMMANDS,
  DOOR_COMMANDS,
  DOOR_PIPE_COMMANDS,
  DOOR_STDIN_COMMANDS,
  VENDOR_DOOR_COMMANDS,
  fleetWritable,
  pipeThroughDoor,
  sendThroughDoor,
} from '../inbox/door.js';
import { writeOut } from './output.js';

/**
 * A fleet command run where the fleet root is read-only (inside an agent's sandbox): the
 * agent's harness runs it on the host through the door (inbox/door.ts `run`), as its own
 * child, so it acts as that agent with the refusals it would get from the harness
 * (docs/security.md "The door"). `viaBus`: the harness holds the bus's credentials and this
 * command does not (DOOR_BUS_ENV), so it is forwarded wherever the fleet root is writable too.
 * Returns the exit code, or null when this command line is not one to forward (it then runs
 * here as usual).
 */
export async function forwardThroughDoor(
  door: string,
  args: string[],
  at: number,
  viaBus = false,
): Promise<number | null> {
  const name = args[at];
  const forwarded =
    name !== undefined &&
    (DOOR_COMMANDS.has(name) ||
      VENDOR_DOOR_COMMANDS.has(name) ||
      DOOR_PIPE_COMMANDS.has(name) ||
      (viaBus && DOOR_BUS_COMMANDS.has(name)));
  if (!forwarded || (!viaBus && fleetWritable(door))) return null;
  if (args.some((a) => a === '--root' || a.startsWith('--root='))) {
    throw new FlotillaError(
      "--root is refused here: an agent's fleet commands act on its own agent's fleet, through its harness (inside its sandbox, or on a bus whose credentials are its harness's) — drop --root",
      { code: 'door-root', exitCode: 2 },
    );
  }
  // `flotilla mcp` stays connected: its stdio is joined to the server the harness runs.
  if (DOOR_PIPE_COMMANDS.has(name)) {
    await pipeThroughDoor(
      door,
      { op: 'pipe', args: args.slice(at), cwd: process.cwd() },
      process.stdin,
      process.stdout,
    );
    return 0;
  }
  // A task given on stdin (`echo task | spawn-agent`, `… | flotilla run`) goes along; other commands read none.
  const stdin = DOOR_STDIN_COMMANDS.has(name) && !process.stdin.isTTY ? await readAll() : undefined;
  const r = await sendThroughDoor(
    door,
    { op: 'run', args: args.slice(at), cwd: process.cwd(), ...(stdin !== undefined ? { stdin } : {}) },
    0,
  );
  writeOut(String(r.stdout ?? ''));
  if (r.stderr) process.stderr.write(String(r.stderr));
  return typeof r.exitCode === 'number' ? r.exitCode : 1;
}

async function readAll(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(String(c)));
  return Buffer.concat(chunks).toString('utf8');
}
