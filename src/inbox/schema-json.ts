import { writeFileSync } from 'node:fs';
import { z } from 'zod';
import { messageHeaderSchema } from './message-schema.js';

/**
 * `inbox/message.schema.json`: the JSON Schema of a message's frontmatter, generated from
 * the zod schema so the two cannot drift (a test fails when the committed file is stale).
 * Input shape: what a writer must put in the file (defaults, like priority, may be left out).
 */
export function messageJsonSchema(): string {
  const schema = z.toJSONSchema(messageHeaderSchema, { io: 'input', target: 'draft-2020-12' });
  const doc = {
    $id: 'https://github.com/flotilla/flotilla/blob/main/inbox/message.schema.json',
    title: 'Flotilla inbox message frontmatter',
    ...schema,
  };
  return JSON.stringify(doc, null, 2) + '\n';
}

/** Writes the schema file; `node dist/inbox/schema-json.js [path]` regenerates the committed copy. */
export function writeMessageJsonSchema(path: string): void {
  writeFileSync(path, messageJsonSchema());
}

if (import.meta.url === `file://${process.argv[1]}`) {
  writeMessageJsonSchema(process.argv[2] ?? 'inbox/message.schema.json');
}
