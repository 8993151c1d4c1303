/** Agent definitions (§7): parse and load Markdown files with frontmatter. */
export * from './types.js';
export { parseDefinition } from './parse.js';
export { parseFrontmatter, parseLenient } from './frontmatter.js';
export { loadDefinitions, loadDirectory, pickDefinition, MAX_DEFINITION_BYTES, type LoadOptions } from './load.js';
export { definitionDirs } from './locations.js';
export { agentIdBase, CLAUDE_NAME_PATTERN, suggestName } from './normalize.js';
export { builtinDefinitions } from './builtin.js';
export { renderDefinition } from './render.js';
