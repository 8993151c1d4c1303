import { stringify } from 'yaml';

/** Writes a new definition file's text (`flotilla agents create`): YAML frontmatter + prompt. */
export function renderDefinition(
  fields: { name: string; description: string; model?: string; tools?: string[] },
  body: string,
): string {
  const data: Record<string, unknown> = { name: fields.name, description: fields.description };
  if (fields.model) data.model = fields.model;
  if (fields.tools?.length) data.tools = fields.tools.join(', ');
  return `---\n${stringify(data, { lineWidth: 0 }).trimEnd()}\n---\n\n${body.trim()}\n`;
}
