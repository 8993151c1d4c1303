import type { Link } from './link.js';
import { isWrongRevision } from './lost.js';

/**
 * Deletes `key` if its last revision is still `revision` (false when another writer put it
 * since: theirs stays), then purges the delete's marker — only messages up to the marker, so
 * a put that lands between the two is kept — and the bucket keeps no tombstone.
 */
export async function removeAt(
  link: Pick<Link, 'js' | 'jsm'>,
  bucket: string,
  key: string,
  revision: number,
): Promise<boolean> {
  const subject = `$KV.${bucket}.${key}`;
  const h = (await import('./client.js')).headers();
  h.set('KV-Operation', 'DEL');
  let seq: number;
  try {
    seq = (await link.js.publish(subject, undefined, { headers: h, expect: { lastSubjectSequence: revision } })).seq;
  } catch (err) {
    if (isWrongRevision(err)) return false;
    throw err;
  }
  await link.jsm.streams.purge(`KV_${bucket}`, { filter: subject, seq: seq + 1 });
  return true;
}
