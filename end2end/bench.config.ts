import { defineConfig } from '@playwright/test';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fullChromium, providerAndServer } from './serve-env';

// The benchmarks (scripts/bench-e2e.sh), kept out of the test suite: the same
// release server, with the scripted provider pacing its answers like a real
// model, about 50 tokens a second (4 characters every 20 ms).
const port = Number(process.env.RIVET_BENCH_PORT ?? 3290);
const mockPort = Number(process.env.RIVET_BENCH_MOCK_PORT ?? 3291);
// Workers load this file again and inherit the runner's environment, so the
// directory is made once.
const dataDir = process.env.RIVET_E2E_DATA_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'rivet-bench-'));
// The tests queue provider faults here (see docs/mock-llm.md).
process.env.RIVET_E2E_MOCK = `http://127.0.0.1:${mockPort}`;
// The timing test shares the IDE's npm cache with its bare run.
process.env.RIVET_E2E_DATA_DIR = dataDir;
// The IDE's access token; every test logs in with it (helpers.ts, `login`).
const token = process.env.RIVET_E2E_TOKEN ?? crypto.randomBytes(24).toString('hex');
process.env.RIVET_E2E_TOKEN = token;

export default defineConfig({
  testDir: './bench',
  timeout: 600_000,
  expect: { timeout: 20_000 },
  // The tests share one server and its projects, so they run one at a time.
  workers: 1,
  fullyParallel: false,
  forbidOnly: true,
  retries: 0,
  reporter: [['list']],
  outputDir: './test-results/bench',
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    trace: 'off',
    ...fullChromium,
  },
  projects: [{ name: 'chromium', use: { browserName: 'chromium' } }],
  // The scripted provider at a real model's pace.
  webServer: providerAndServer({ port, mockPort, dataDir, token, pace: { chunkSize: 4, delayMs: 20 } }),
});
