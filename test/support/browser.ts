import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { chromium, type BrowserContext } from 'playwright-core';
import { CHROMIUM_FLAGS, chromiumPath } from './chromium.ts';

/**
 * The packaged Chromium (./chromium.ts) through playwright-core, in a fresh
 * profile removed after the file. Fails (never skips) when it cannot start:
 * these tests are the dashboard's proof, and every machine runs them.
 */
export async function launchChromium(): Promise<{ newContext: () => Promise<BrowserContext> }> {
  const executablePath = chromiumPath();
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
    const context = await chromium.launchPersistentContext(dir, { executablePath, headless: true, args: CHROMIUM_FLAGS });
    contexts.push({ context, dir });
    return context;
  };
  return { newContext };
}
