import { describe, expect, it } from 'vitest';
import { configSchema, type ConfigInput } from '../../src/config/schema.js';
import {
  expandAlias,
  isScripted,
  parseModelSpec,
  resolveModelSpec,
  type ResolveModelInput,
} from '../../src/model/index.js';
import { UsageError } from '../../src/errors.js';

const DEMO = '/pkg/demo/lead.yaml';
const cfg = (c: ConfigInput = {}) => configSchema.parse(c);

describe('resolveModelSpec: --model → definition → parent → config → keys → demo', () => {
  const withModel = cfg({ model: 'openai:gpt-4.1' });
  const keys = { ANTHROPIC_API_KEY: 'a', OPENAI_API_KEY: 'o' };
  const rows: [string, Omit<ResolveModelInput, 'demoScript'>, string, string][] = [
    [
      'flag beats everything',
      { flag: 'ollama:qwen3', definition: 'opus', parent: 'openai:gpt-5', config: withModel, env: keys },
      'ollama:qwen3',
      'flag',
    ],
    [
      'definition beats parent',
      { definition: 'haiku', parent: 'openai:gpt-5', config: withModel, env: keys },
      'anthropic:claude-haiku-4-5',
      'definition',
    ],
    [
      'definition inherit = parent',
      { definition: 'inherit', parent: 'openai:gpt-5', config: withModel, env: keys },
      'openai:gpt-5',
      'parent',
    ],
    [
      'flag inherit = parent',
      { flag: 'inherit', definition: 'opus', parent: 'ollama:x', config: cfg(), env: {} },
      'ollama:x',
      'parent',
    ],
    [
      'inherit without a parent falls through to config',
      { definition: 'inherit', config: withModel, env: keys },
      'openai:gpt-4.1',
      'config',
    ],
    ['parent beats config', { parent: 'script:/s.yaml', config: withModel, env: keys }, 'script:/s.yaml', 'parent'],
    ['config beats keys', { config: withModel, env: keys }, 'openai:gpt-4.1', 'config'],
    ['ANTHROPIC_API_KEY → sonnet', { config: cfg(), env: keys }, 'anthropic:claude-sonnet-4-5', 'env'],
    ['OPENAI_API_KEY alone → openai default', { config: cfg(), env: { OPENAI_API_KEY: 'o' } }, 'openai:gpt-5', 'env'],
    [
      'empty keys do not count',
      { config: cfg(), env: { ANTHROPIC_API_KEY: '', OPENAI_API_KEY: ' ' } },
      `script:${DEMO}`,
      'demo',
    ],
    ['nothing → the demo script', { config: cfg(), env: {} }, `script:${DEMO}`, 'demo'],
    ['blank flag is ignored', { flag: '  ', config: withModel, env: {} }, 'openai:gpt-4.1', 'config'],
  ];
  it.each(rows)('%s', (_name, input, spec, source) => {
    expect(resolveModelSpec({ ...input, demoScript: DEMO })).toEqual({ spec, source });
  });

  it('expands aliases from config, wherever they appear', () => {
    const config = cfg({
      model: 'fast',
      models: { aliases: { sonnet: 'openai-compatible:lab/sonnet-ish', fast: 'ollama:qwen3' } },
    });
    expect(resolveModelSpec({ flag: 'sonnet', config, env: {}, demoScript: DEMO })).toEqual({
      spec: 'openai-compatible:lab/sonnet-ish',
      source: 'flag',
    });
    expect(resolveModelSpec({ config, env: {}, demoScript: DEMO })).toEqual({ spec: 'ollama:qwen3', source: 'config' });
    expect(resolveModelSpec({ parent: 'fast', config: cfg(), env: {}, demoScript: DEMO }).spec).toBe('fast');
    // The anthropic default follows a re-pointed sonnet alias.
    expect(resolveModelSpec({ config, env: { ANTHROPIC_API_KEY: 'k' }, demoScript: DEMO, flag: undefined }).spec).toBe(
      'ollama:qwen3',
    );
    expect(
      resolveModelSpec({
        config: cfg({ models: { aliases: { sonnet: 'anthropic:claude-sonnet-9' } } }),
        env: { ANTHROPIC_API_KEY: 'k' },
        demoScript: DEMO,
      }).spec,
    ).toBe('anthropic:claude-sonnet-9');
    expect(expandAlias('toString', {})).toBe('toString');
  });
});

describe('parseModelSpec', () => {
  it('splits each provider form', () => {
    expect(parseModelSpec('anthropic:claude-opus-4-1')).toEqual({ provider: 'anthropic', modelId: 'claude-opus-4-1' });
    expect(parseModelSpec('ollama:qwen3:8b')).toEqual({ provider: 'ollama', modelId: 'qwen3:8b' });
    expect(parseModelSpec('openai-compatible:lab/meta/llama-3')).toEqual({
      provider: 'openai-compatible',
      server: 'lab',
      modelId: 'meta/llama-3',
    });
    expect(parseModelSpec('script:demo/lead.yaml')).toEqual({ provider: 'script', modelId: 'demo/lead.yaml' });
  });

  it.each([
    ['sonnet', /has no provider and is not an alias/],
    ['gemini:pro', /unknown provider 'gemini'/],
    ['openai:', /nothing after 'openai:'/],
    ['openai-compatible:lab', /openai-compatible:<name>\/<model>/],
  ])('rejects %s with a usage error that lists the forms', (spec, message) => {
    expect(() => parseModelSpec(spec)).toThrow(UsageError);
    expect(() => parseModelSpec(spec)).toThrow(message);
  });

  it('isScripted', () => {
    expect(isScripted('script:x.yaml')).toBe(true);
    expect(isScripted('anthropic:script')).toBe(false);
  });
});
