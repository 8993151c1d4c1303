import { FlotillaError } from '../errors.js';
import type { Runtime, VendorRuntimeName } from './types.js';

export * from './types.js';

/** A vendor runtime's module, loaded only when an agent runs on it. */
export async function loadRuntime(name: VendorRuntimeName): Promise<Runtime> {
  switch (name) {
    case 'claude': return (await import('./claude.js')).claude;
    default: throw new FlotillaError(`runtime '${name}' is not supported in this build yet — use --runtime claude or flotilla`, { code: 'unknown-runtime' });
  }
}
