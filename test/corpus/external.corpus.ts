import { resolve } from 'node:path';
import { checkCorpus } from '../definitions/corpus-checks.js';

/**
 * Opt-in: every Claude Code definition in a folder of the person's choosing loads through
 * the real CLI. `FLOTILLA_CORPUS=DIR npm run test:corpus`; not part of `npm test`, which reads
 * nothing outside the repository.
 */
const dir = process.env.FLOTILLA_CORPUS;
if (!dir)
  throw new Error(
    'FLOTILLA_CORPUS is not set — run as FLOTILLA_CORPUS=DIR npm run test:corpus, with DIR a folder of .md definitions',
  );
checkCorpus(resolve(dir));
