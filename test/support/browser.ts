import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/**
 * Debian's chromium through playwright-core, in a fresh profile removed
 * after the file. Fails (never skips) when chromium is not installed: these
 * tests are the dashboard's proof, and CI must run them.
 */
export async function launchChromium(): Promise<{ newContext: () => Promise<BrowserContext> }> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`${CHROMIUM_PATH} not found: the browser tests need Debian's chromium (apt-get update && apt-get install -y chromium)`);
  }
  const contexts: { context: BrowserContext; dir: string }[] = [];
  afterAll(async () => {
    for (const { context, dir } of contexts.splice(0)) {
      await context.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
  // Each context its own profile, so cookies (the session) are not shared between them.
  const newContext = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'stampede-dashboard-browser-'));
    const context = await chromium.launchPersistentContext(dir, { executablePath: CHROMIUM_PATH, headless: true, args: FLAGS });
    contexts.push({ context, dir });
    return context;
  };
  return { newContext };
}
