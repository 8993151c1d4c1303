/**
 * Model access (§6). Importing this module loads no provider SDK; `createModel` imports the
 * one it needs. The scripted model itself lives in ./scripted/index.js.
 */
export { createModel, OLLAMA_BASE_URL, type CreateModelOptions } from './create.js';
export {
  ANTHROPIC_DEFAULT_ALIAS,
  OPENAI_DEFAULT_MODEL,
  PROVIDERS,
  expandAlias,
  isScripted,
  parseModelSpec,
  resolveModelSpec,
  type ModelSource,
  type ParsedSpec,
  type ProviderName,
  type ResolveModelInput,
  type ResolvedModel,
} from './spec.js';
export type { ScriptedCall, ScriptedModelOptions } from './scripted/scripted-model.js';
