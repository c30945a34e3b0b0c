import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The directory holding package.json, whether running from src/ (TypeScript) or dist/. */
export function projectRoot(from = __dirname): string {
  let dir = from;
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${from}`);
    dir = parent;
  }
  return dir;
}
