import { parseDocument } from 'yaml';
import { FlotillaError } from '../errors.js';

/**
 * A config file's YAML, in a module of its own: the loader imports it (and the `yaml` package)
 * only for a file that exists, so a new fleet's first config read never loads the parser (§14).
 */

/** Parses a config file's YAML; invalid YAML is an error with the file and line. */
export function parseConfigYaml(text: string, file: string): Record<string, unknown> {
  const doc = parseDocument(text);
  const err = doc.errors[0];
  if (err) {
    const line = err.linePos?.[0]?.line;
    throw new FlotillaError(
      `${file}${line ? `:${line}` : ''}: invalid YAML: ${err.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')} — fix the syntax at that line`,
      { code: 'config-invalid' },
    );
  }
  const value: unknown = doc.toJS();
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new FlotillaError(
      `${file}: expected a mapping of keys (e.g. 'limits:'), found ${Array.isArray(value) ? 'a list' : typeof value}`,
      { code: 'config-invalid' },
    );
  }
  return value as Record<string, unknown>;
}
