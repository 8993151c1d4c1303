import { modeSuite } from './modes.js';
import { TARGETS } from './targets.js';

modeSuite(TARGETS.gemini);
