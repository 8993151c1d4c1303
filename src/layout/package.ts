import { join } from 'node:path';

// By path, not URL: `new URL` and fileURLToPath for each were ~0.3 ms of every `flotilla send` (§14).
/** The installed package's root (same from src/ under tests and dist/ when built). */
export const PACKAGE_ROOT = join(import.meta.dirname, '../../');

/** The built CLI entry point that every child runs with `process.execPath` (§5). */
export const CLI_ENTRY = join(import.meta.dirname, '../../dist/cli/main.js');

/** Where `spawn-agent` lives, for children's PATH. */
export const TOOLS_DIR = join(import.meta.dirname, '../../tools');

/** The bundled offline demo's lead script (the model of last resort, §6). */
export const DEMO_SCRIPT = join(import.meta.dirname, '../../demo/lead.yaml');
