/**
 * Redaction of granted secrets (§11). A process that holds a secret value registers it here
 * for as long as it holds it; every writer that puts text on disk or on a screen (tool
 * output, transcript, audit, log, pane, output file, message body, registry record) passes
 * its text through `redact` first. In a process that holds nothing, `redact` returns its
 * input unchanged at the cost of one size check.
 *
 * This module imports nothing, so the lowest layers (audit, registry) may use it.
 */

/** One held value: the key it is shown as and every spelling of it that is replaced. */
export interface HeldSecret {
  key: string;
  /** The value and its encoded forms, longest first. */
  forms: string[];
}

/** What a value is replaced with: `[secret:github-token]`. */
export function secretMarker(key: string): string {
  return `[secret:${key}]`;
}

/**
 * The spellings of a value that are replaced: as is, JSON-escaped, base64 (padded, unpadded
 * and URL-safe) and URL-encoded (`%20` and `+` for spaces). A value embedded in a longer
 * base64 stream is not found: its encoding depends on the bytes around it.
 */
export function secretForms(value: string): string[] {
  const b64 = Buffer.from(value, 'utf8').toString('base64');
  const forms = new Set([
    value,
    JSON.stringify(value).slice(1, -1),
    b64,
    b64.replace(/=+$/, ''),
    Buffer.from(value, 'utf8').toString('base64url'),
    encodeURIComponent(value),
    encodeURIComponent(value).replace(/%20/g, '+'),
  ]);
  return [...forms].filter((f) => f.length > 0).sort((a, b) => b.length - a.length);
}

/** Replaces every form of every held secret in `text`. */
export function redactText(text: string, held: Iterable<HeldSecret>): string {
  let out = text;
  for (const s of held) {
    const marker = secretMarker(s.key);
    for (const form of s.forms) if (out.includes(form)) out = out.split(form).join(marker);
  }
  return out;
}

/** Redacts every string inside a JSON-like value (object keys are left alone). */
export function redactDeep<T>(value: T, held: Iterable<HeldSecret>): T {
  const list = [...held];
  if (list.length === 0) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return redactText(v, list);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    }
    return v;
  };
  return walk(value) as T;
}

// The secrets this process holds now (a harness with live grants, an approver mid-handoff).
const heldNow = new Map<symbol, HeldSecret>();

/** Registers a value for redaction; the returned function stops redacting it. */
export function holdForRedaction(key: string, value: string): () => void {
  const token = Symbol(key);
  heldNow.set(token, { key, forms: secretForms(value) });
  return () => {
    heldNow.delete(token);
  };
}

/**
 * A redactor for values this process does not hold: the fleet's digest set
 * (secrets/digests.ts), installed by a harness so that a value any agent of the fleet was
 * ever granted is replaced wherever it shows up, after expiry and in a resumed agent too.
 * It returns its input (the same string) when it finds nothing.
 */
let fleetRedactor: ((text: string) => string) | undefined;

export function setFleetRedactor(fn: ((text: string) => string) | undefined): void {
  fleetRedactor = fn;
}

/**
 * `text` with every secret this process holds, and every one the fleet knows by digest, replaced by `[secret:<key>]`.
 */
export function redact(text: string): string {
  const held = heldNow.size === 0 ? text : redactText(text, heldNow.values());
  return fleetRedactor ? fleetRedactor(held) : held;
}

/** `value` with every string inside it redacted (see `redact`). */
export function redactValue<T>(value: T): T {
  if (heldNow.size === 0 && !fleetRedactor) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return redact(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    }
    return v;
  };
  return walk(value) as T;
}
