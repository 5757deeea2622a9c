// `npm start`: the demo. Builds first (npm run build) unless dist/ is newer than every source the
// build reads, then runs `seam-stream demo` from dist/.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outputs = ['dist/cli.js', 'dist/index.cjs', 'dist/index.node.js', 'dist/index.js'].map((f) => join(root, f));
const inputs = ['assembly', 'bindings', 'cli', 'scripts', 'tsup.config.ts', 'asconfig.json', 'package.json', 'package-lock.json'];
const generated = new Set(['generated', 'unicode-tables.ts', 'generated-tables.ts']);

function newest(p) {
  const s = statSync(p);
  if (!s.isDirectory()) return s.mtimeMs;
  let t = 0;
  for (const e of readdirSync(p)) if (!generated.has(e)) t = Math.max(t, newest(join(p, e)));
  return t;
}

const built = outputs.every(existsSync) ? Math.min(...outputs.map((f) => statSync(f).mtimeMs)) : 0;
const source = Math.max(...inputs.map((f) => join(root, f)).filter(existsSync).map(newest));
if (built < source) {
  console.error(built === 0 ? 'npm start: building first (npm run build)…' : 'npm start: sources changed since the last build: npm run build…');
  const b = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'], shell: process.platform === 'win32' });
  if (b.status !== 0) process.exit(b.status ?? 1);
}
const r = spawnSync(process.execPath, [join(root, 'dist', 'cli.js'), 'demo'], { cwd: root, stdio: 'inherit' });
process.exit(r.status ?? 1);
