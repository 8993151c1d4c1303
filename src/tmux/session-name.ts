import { createHash } from 'node:crypto';
import { basename, resolve } from 'node:path';

/**
 * The fleet session name (§5.4): `<prefix>-<slug of the project dir name>-<hash>`. tmux
 * session names cannot hold '.' or ':' (target syntax), so the slug keeps lowercase
 * letters, digits and '-'; the short hash of the full path keeps two projects with the same
 * directory name apart.
 */
export function fleetSessionName(prefix: string, project: string): string {
  const full = resolve(project);
  const slug = slugify(basename(full)).slice(0, 32).replace(/-+$/, '') || 'project';
  const hash = createHash('sha256').update(full).digest('hex').slice(0, 6);
  const head = slugify(prefix) || 'flotilla';
  return `${head}-${slug}-${hash}`;
}

function slugify(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-+|-+$/g, '');
}
