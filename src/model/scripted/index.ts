/** The scripted model (`script:<file.yaml>`, docs/scripted-model.md). */
export {
  ScriptedModel,
  ScriptedModelError,
  loadScriptedModel,
  type ScriptedCall,
  type ScriptedModelOptions,
} from './scripted-model.js';
export { loadScript, parseScript, type Guard, type Script, type ScriptInput } from './script.js';
