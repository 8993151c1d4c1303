/**
 * The checks the config schema makes with `.refine()`, by name: a zod refinement is a function,
 * which tools/gen-validators.mjs cannot read, so the schema and its generated validator
 * (config-validate.generated.ts) both call these. The generator finds each refinement here by
 * identity and refuses one it does not find, so no check is left out of the validator.
 */
export const CONFIG_REFINEMENTS = {
  /** A secret's source (§11): `env` or `command`, never both. */
  oneSecretSource: (s: { env?: string | undefined; command?: string | undefined }): boolean => !(s.env && s.command),
  /** A host's name: `local` is this machine. */
  notLocalHost: (name: string): boolean => name !== 'local',
};
