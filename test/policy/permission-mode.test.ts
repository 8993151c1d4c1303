import { describe, expect, it } from 'vitest';
import { parsePermissionMode, permissionDecision, type PermissionMode } from '../../src/policy/permission-mode.js';
import type { ToolClass } from '../../src/tools/types.js';

const table: [PermissionMode, ToolClass, 'allow' | 'deny' | 'ask'][] = [
  ['default', 'read', 'allow'],
  ['default', 'write', 'ask'],
  ['default', 'exec', 'ask'],
  ['default', 'fleet', 'allow'],
  ['accept_edits', 'read', 'allow'],
  ['accept_edits', 'write', 'allow'],
  ['accept_edits', 'exec', 'ask'],
  ['dont_ask', 'write', 'allow'],
  ['dont_ask', 'exec', 'allow'],
  ['bypass_permissions', 'exec', 'allow'],
  ['plan', 'read', 'deny'],
  ['plan', 'write', 'deny'],
  ['plan', 'exec', 'deny'],
  ['plan', 'fleet', 'deny'],
];

describe('permissionDecision', () => {
  it.each(table)('%s / %s → %s when someone can answer', (mode, klass, decision) => {
    expect(permissionDecision(mode, klass, { canAsk: true })).toEqual({ decision, rule: mode });
  });

  it.each(table)('%s / %s with nobody to ask never asks', (mode, klass, decision) => {
    const d = permissionDecision(mode, klass, { canAsk: false });
    if (decision === 'ask') expect(d).toEqual({ decision: 'deny', rule: 'no-approver' });
    else expect(d).toEqual({ decision, rule: mode });
  });
});

describe('parsePermissionMode', () => {
  it.each([
    ['default', 'default'],
    ['plan', 'plan'],
    ['accept_edits', 'accept_edits'],
    ['acceptEdits', 'accept_edits'],
    ['dontAsk', 'dont_ask'],
    ['dont_ask', 'dont_ask'],
    ['bypassPermissions', 'bypass_permissions'],
    ['bypass_permissions', 'bypass_permissions'],
  ])('%s → %s', (raw, mode) => expect(parsePermissionMode(raw)).toBe(mode));

  it.each(['yolo', 'AcceptEdits', '', 'accept-edits'])('rejects %j', (raw) =>
    expect(parsePermissionMode(raw)).toBeUndefined(),
  );
});
