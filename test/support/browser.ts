import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrowserContext, chromium } from 'playwright-core';

const CHROMIUM = process.env.STARLAB_TEST_CHROMIUM ?? '/usr/bin/chromium';

/** Debian's chromium, installed on first use (CI machines start without it). */
function ensureChromium(): void {
  if (existsSync(CHROMIUM)) return;
  try {
    execFileSync('apt-get', ['install', '-y', '-qq', 'chromium'], { stdio: 'ignore', timeout: 300_000 });
  } catch {
    execFileSync('sh', ['-c', 'apt-get update -qq && apt-get install -y -qq chromium'], { stdio: 'ignore', timeout: 600_000 });
  }
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing and apt-get could not install chromium`);
}

/**
 * Headless Chromium with a fresh profile. The network flags keep it from calling home (those
 * connections are refused on a closed network); --no-sandbox because tests run as root.
 */
export async function launchBrowser(): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  ensureChromium();
  const profile = mkdtempSync(join(tmpdir(), 'starlab-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1440, height: 900 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
