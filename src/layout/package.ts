import { fileURLToPath } from 'node:url';

/** The installed package's root (same from src/ under tests and dist/ when built). */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The built CLI entry point that every child runs with `process.execPath` (§5). */
export const CLI_ENTRY = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/** Where `spawn-agent` lives, for children's PATH. */
export const TOOLS_DIR = fileURLToPath(new URL('../../tools', import.meta.url));

/** The bundled offline demo's lead script (the model of last resort, §6). */
export const DEMO_SCRIPT = fileURLToPath(new URL('../../demo/lead.yaml', import.meta.url));
