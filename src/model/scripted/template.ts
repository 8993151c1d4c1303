/**
 * `{{name | filter:arg | …}}` templating for scripted replies. Variables come from the prompt
 * the model was called with, so a script can echo what a tool returned or a person said.
 */

export interface TemplateVars {
  last_tool_result: string;
  last_user: string;
  last_message: string;
  task: string;
  turn: string;
  env: Record<string, string | undefined>;
}

const VARIABLES = ['last_tool_result', 'last_user', 'last_message', 'task', 'turn'] as const;
const FILTERS = ['truncate', 'first_line', 'last_line', 'trim', 'one_line'] as const;
const PATTERN = /\{\{\s*([^{}|]+?)\s*((?:\|[^{}]*)?)\}\}/g;

/** Walks strings inside nested data (tool inputs are objects). */
function strings(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) value.forEach((v) => strings(v, out));
  else if (value && typeof value === 'object') Object.values(value).forEach((v) => strings(v, out));
  return out;
}

/** Returns a message naming the first bad variable or filter, or undefined when all are known. */
export function checkTemplates(values: unknown[]): string | undefined {
  for (const s of strings(values)) {
    for (const m of s.matchAll(PATTERN)) {
      const name = m[1]!;
      if (!name.startsWith('env.') && !(VARIABLES as readonly string[]).includes(name)) {
        return `unknown template variable '{{${name}}}' — use one of ${VARIABLES.join(', ')} or env.NAME`;
      }
      for (const f of filtersOf(m[2] ?? '')) {
        if (!(FILTERS as readonly string[]).includes(f.name))
          return `unknown template filter '${f.name}' — use one of ${FILTERS.join(', ')}`;
        if (f.name === 'truncate' && !(Number(f.arg) > 0))
          return `'truncate' needs a positive length, e.g. {{${name} | truncate:200}}`;
      }
    }
  }
  return undefined;
}

function filtersOf(spec: string): { name: string; arg: string | undefined }[] {
  return spec
    .split('|')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      const [name, arg] = s.split(':', 2).map((x) => x.trim());
      return { name: name!, arg };
    });
}

function applyFilter(value: string, name: string, arg: string | undefined): string {
  switch (name) {
    case 'truncate': {
      const n = Number(arg);
      return value.length <= n ? value : `${value.slice(0, n)}…`;
    }
    case 'first_line':
      return value.split('\n')[0] ?? '';
    case 'last_line':
      return value.trimEnd().split('\n').at(-1) ?? '';
    case 'trim':
      return value.trim();
    case 'one_line':
      return value.replace(/\s+/g, ' ').trim();
    default:
      return value;
  }
}

export function renderString(template: string, vars: TemplateVars): string {
  return template.replace(PATTERN, (_all, rawName: string, spec: string) => {
    const name = rawName.trim();
    let value = name.startsWith('env.')
      ? (vars.env[name.slice(4)] ?? '')
      : String(vars[name as (typeof VARIABLES)[number]] ?? '');
    for (const f of filtersOf(spec)) value = applyFilter(value, f.name, f.arg);
    return value;
  });
}

/** Renders every string inside a value (tool inputs), keeping its shape. */
export function renderDeep<T>(value: T, vars: TemplateVars): T {
  if (typeof value === 'string') return renderString(value, vars) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => renderDeep(v, vars)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderDeep(v, vars)])) as T;
  }
  return value;
}
