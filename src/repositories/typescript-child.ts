import { extname, join } from 'node:path';

/**
 * The loader a child needs when its entry is TypeScript (this process runs from the sources:
 * tests, `npm run worker:dev`): scripts/register.js, which keeps what it transpiles on disk, so a
 * child per job or evaluation does not transpile the trainer again. A built entry (.js) needs none.
 */
export function childExecArgv(entry: string): string[] {
  return extname(entry) === '.ts' ? ['-r', TYPESCRIPT_LOADER] : [];
}

/** scripts/register.js: `node -r TYPESCRIPT_LOADER some.ts` runs a TypeScript entry. */
export const TYPESCRIPT_LOADER = join(__dirname, '..', '..', 'scripts', 'register.js');
