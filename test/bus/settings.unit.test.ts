import { describe, expect, it } from 'vitest';
import { DEFAULT_FLEET_SETTINGS } from '../../src/bus/settings.js';
import { defaultConfig } from '../../src/config/schema.js';

describe('the bus settings a fast command assumes without loading the config', () => {
  it('equal the config schema defaults', () => {
    expect(DEFAULT_FLEET_SETTINGS).toEqual(defaultConfig().fleet);
  });
});
