// The built package's declarations as a consumer compiles them: test/ecosystem/types holds an ES
// module and a CommonJS consumer of 'seam-stream' (resolved through the exports map to
// dist/index.d.ts and dist/index.d.cts), type-checked strict and without skipLibCheck by the
// oldest TypeScript the package supports and by the current one.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(__dirname, '..', '..');
const tsc = (pkg: string) => {
  const r = spawnSync(process.execPath, [join(root, 'node_modules', pkg, 'bin', 'tsc'), '-p', join(__dirname, 'types')], {
    cwd: root,
    encoding: 'utf8',
  });
  return { status: r.status, output: r.stdout + r.stderr };
};

describe('the declarations', () => {
  it('type-check in a strict consumer with TypeScript 5.9', () => {
    expect(tsc('typescript')).toEqual({ status: 0, output: '' });
  });

  // TypeScript 5.0 has no `AllowSharedBufferSource` and no generic typed arrays (5.7): the
  // public types name neither.
  it('type-check in a strict consumer with TypeScript 5.0', () => {
    expect(tsc('typescript-5.0')).toEqual({ status: 0, output: '' });
  });
});
