import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // Two cores: files run two at a time, each on its own fresh database.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    env: { STAMPEDE_LOG: process.env.STAMPEDE_LOG ?? 'warn' },
  },
});
