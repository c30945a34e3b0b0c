import type { NestExpressApplication } from '@nestjs/platform-express';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { projectRoot } from '../config/paths';

/** The dashboard's static files (plain ES modules, no build step). */
export const DASHBOARD_DIR = join(projectRoot(), 'src', 'dashboard');
const UPLOT_DIR = join(dirname(require.resolve('uplot/package.json')), 'dist');

/**
 * Serves the web dashboard at /dashboard and the charting library it imports. The pages are
 * public files; every piece of data they show comes from the API with the user's key as a
 * Bearer token, so the dashboard has exactly the API's access rules. A strict Content Security
 * Policy (scripts from this origin plus the page's one inline import map, by hash) keeps
 * anything a job stored — trajectory text, names — from running as script; the pages also only
 * ever insert such text as text.
 */
export function mountDashboard(app: NestExpressApplication): void {
  const policy = contentSecurityPolicy(readFileSync(join(DASHBOARD_DIR, 'index.html'), 'utf8'));
  const setHeaders = (res: { setHeader(name: string, value: string): void }) => {
    res.setHeader('Content-Security-Policy', policy);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('Cache-Control', 'no-cache');
  };
  app.useStaticAssets(UPLOT_DIR, { prefix: '/dashboard/vendor/uplot/', setHeaders, index: false });
  app.useStaticAssets(DASHBOARD_DIR, { prefix: '/dashboard/', setHeaders, index: 'index.html' });
}

/** CSP allowing this origin's scripts, and the page's inline import map by its hash. */
export function contentSecurityPolicy(indexHtml: string): string {
  const importMap = /<script type="importmap">([\s\S]*?)<\/script>/.exec(indexHtml)?.[1];
  const hash = importMap === undefined ? '' : ` 'sha256-${createHash('sha256').update(importMap).digest('base64')}'`;
  return [
    "default-src 'self'",
    `script-src 'self'${hash}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "connect-src 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join('; ');
}
