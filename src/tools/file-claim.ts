/**
 * Asked by write and edit before they change a file (docs/design.md §16, file leases): null
 * to go ahead, or the refusal the model reads, the file untouched. The harness passes the
 * fleet's lease; a tool built without one changes files as before.
 */
export type FileClaim = (canonicalPath: string, tool: 'write' | 'edit') => Promise<string | null>;
