import { describe, expect, it } from 'vitest';
import { vendorWriteTargets } from '../../src/harness/cli-host/lease-check.js';

/** The files a vendor CLI's file tool would change, as its pre-tool hook reads them (docs/design.md §16). */
describe('vendorWriteTargets', () => {
  const at = (tool: string, input: Record<string, unknown>) => vendorWriteTargets(tool, input, '/proj', '/home/u');
  it('Claude and Gemini name the file; NotebookEdit its notebook; a read changes nothing', () => {
    expect(at('write', { file_path: 'src/a.ts', content: 'x' })).toEqual(['/proj/src/a.ts']);
    expect(at('edit', { file_path: '/proj/b.ts', old_string: 'a', new_string: 'b' })).toEqual(['/proj/b.ts']);
    expect(at('NotebookEdit', { notebook_path: 'n.ipynb', new_source: '' })).toEqual(['/proj/n.ipynb']);
    expect(at('read', { file_path: 'a' })).toBeUndefined();
  });
  it("Codex's apply_patch: every file the patch adds, updates, deletes or moves to", () => {
    const patch =
      '*** Begin Patch\n*** Add File: new.txt\n+x\n*** Update File: src/a.ts\n*** Move to: src/b.ts\n@@\n-a\n+b\n*** Delete File: old.txt\n*** End Patch\n';
    expect(at('write', { input: patch })).toEqual([
      '/proj/new.txt',
      '/proj/src/a.ts',
      '/proj/src/b.ts',
      '/proj/old.txt',
    ]);
    expect(at('write', { command: ['apply_patch', patch].join(' ') })).toHaveLength(4);
  });
});
