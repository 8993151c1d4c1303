import { execFileSync } from 'node:child_process';
import { FlotillaError } from '../errors.js';

/**
 * The OS sandbox for shell commands (§11, `security.sandbox: bubblewrap`): the command sees
 * the whole filesystem read-only, may write only its working directory (and the agent's
 * memory dir), sees the fleet root read-only even inside the project, gets a private /tmp,
 * and has no network unless allowed. This, not the shell gate, is the boundary against a
 * hostile model (docs/security.md).
 */
export interface SandboxSpec {
  /** Directories the command may write (cwd, memory dir). */
  writable: readonly string[];
  /** Directories kept read-only even when inside a writable one (the fleet root). */
  readOnly: readonly string[];
  network: boolean;
  /** The bwrap binary (default: found on PATH). */
  bwrap?: string;
}

/** Finds bwrap or throws a one-line error saying how to get it or turn the sandbox off. */
export function findBubblewrap(env: NodeJS.ProcessEnv = process.env): string {
  try {
    return execFileSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8', env }).trim();
  } catch {
    throw new FlotillaError("security.sandbox is 'bubblewrap' but bwrap is not installed — install bubblewrap (apt-get install bubblewrap) or set security.sandbox: none", { code: 'sandbox-missing' });
  }
}

/** Wraps a command's argv (`sh -c …`) in bubblewrap. Later binds win, so order matters. */
export function bubblewrapArgv(spec: SandboxSpec, argv: readonly string[]): string[] {
  const out = [spec.bwrap ?? 'bwrap', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
  for (const dir of spec.writable) out.push('--bind', dir, dir);
  for (const dir of spec.readOnly) out.push('--ro-bind-try', dir, dir);
  // The memory dir lives under the fleet root: bind it writable again after the read-only root.
  for (const dir of spec.writable) if (spec.readOnly.some((r) => dir.startsWith(r + '/'))) out.push('--bind', dir, dir);
  if (!spec.network) out.push('--unshare-net');
  out.push('--die-with-parent', '--', ...argv);
  return out;
}
