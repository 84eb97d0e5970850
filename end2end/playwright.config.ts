import { defineConfig } from '@playwright/test';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, providerAndServer } from './serve-env';

// The suite runs against a built server and site: `cargo leptos build
// --release` must have written target/release/rivet and target/site first,
// or RIVET_E2E_BIN name another build of the server (scripts/test.sh names
// its `ci` build).
const root = path.resolve(__dirname, '..');
// The suite can run on several workers (RIVET_E2E_WORKERS), each with a slot
// of its own: an IDE, a scripted provider, a port for tests that start their
// own server, and a data directory. A worker never sees another's projects or
// queued faults. Workers load this file again, with TEST_PARALLEL_INDEX set,
// and pick their slot here. Two workers by default: on 2 cores they take
// 3.1 minutes against 3.6 for one (three runs each, all passed, 2026-11-29),
// since a test often waits on npm, a dev server or a stream while the other
// computes.
const workers = Number(process.env.RIVET_E2E_WORKERS ?? 2);
const basePort = Number(process.env.RIVET_E2E_PORT ?? 3190);
// Made once: the workers inherit the runner's environment. The runner
// removes it when it exits (the projects' installs make it hundreds of MB a
// run); a directory given in RIVET_E2E_DATA_ROOT is kept.
const given = process.env.RIVET_E2E_DATA_ROOT;
const dataRoot = given ?? fs.mkdtempSync(path.join(os.tmpdir(), 'rivet-e2e-'));
process.env.RIVET_E2E_DATA_ROOT = dataRoot;
if (given === undefined) {
  process.on('exit', () => {
    try {
      fs.rmSync(dataRoot, { recursive: true, force: true });
    } catch (e) {
      console.error(`could not remove the suite's data directory ${dataRoot}: ${e}`);
    }
  });
}
// mkdtemp makes it 0700; the sandboxes' user must pass through it to reach
// each slot's projects (Rivet opens the data directory itself, not its parent).
fs.chmodSync(dataRoot, 0o755);

function slot(index: number) {
  const port = basePort + 10 * index;
  const dataDir = path.join(dataRoot, `slot-${index}`);
  fs.mkdirSync(dataDir, { recursive: true });
  return { port, mockPort: port + 1, ownPort: port + 2, dataDir };
}

const slots = Array.from({ length: workers }, (_, index) => slot(index));
const mine = slots[Number(process.env.TEST_PARALLEL_INDEX ?? 0)] ?? slots[0];
// The tests queue provider faults here (see docs/mock-llm.md).
process.env.RIVET_E2E_MOCK = `http://127.0.0.1:${mine.mockPort}`;
// Where this slot's IDE keeps its projects (a test may plant files there).
process.env.RIVET_E2E_DATA_DIR = mine.dataDir;
// Tests that stop a server start one of their own on this port (own-server.ts).
process.env.RIVET_E2E_OWN_PORT = String(mine.ownPort);
// The IDE's access token; every test logs in with it (helpers.ts, `login`).
const token = process.env.RIVET_E2E_TOKEN ?? crypto.randomBytes(24).toString('hex');
process.env.RIVET_E2E_TOKEN = token;

/** The scripted provider and the IDE of one slot. The provider replays the
 *  fixtures a little slower than a fast model so streaming and Stop can be
 *  watched. */
function servers({ port, mockPort, dataDir }: ReturnType<typeof slot>) {
  return providerAndServer({
    port,
    mockPort,
    dataDir,
    token,
    pace: { chunkSize: 24, delayMs: 8 },
    extraEnv: {
      // WebContainer projects load the @webcontainer/api double, whose
      // commands run in the project's sandbox (the real runtime needs
      // StackBlitz's servers, which a closed network cannot reach).
      RIVET_RUNTIME_WEBCONTAINER_DIR: path.join(root, 'end2end/webcontainer-double'),
      // "Find local models" asks the scripted provider and a port nothing
      // listens on (settings.spec.ts).
      RIVET_LLM_LOCAL_SERVERS: `http://127.0.0.1:${mockPort},http://127.0.0.1:9`,
      // The scripted provider's models take images (pointing.spec.ts sends one).
      RIVET_LLM_VISION: 'true',
    },
  });
}

export default defineConfig({
  testDir: './tests',
  timeout: 240_000,
  expect: { timeout: 20_000 },
  // Each worker has its slot's server; the tests of one file run in order.
  workers,
  fullyParallel: false,
  forbidOnly: true,
  retries: 0,
  reporter: [['list']],
  outputDir: './test-results',
  use: {
    baseURL: `http://127.0.0.1:${mine.port}`,
    // A trace (screenshots and DOM snapshots at every step) is recorded only
    // when asked for: recorded for every test and kept for the failures, it
    // took the suite from 4.5 to 5.9 minutes on 2 cores (Chromium's browser
    // process 70 s of CPU against 117, its GPU process 12 against 67, the
    // runner 35 against 70). RIVET_E2E_TRACE=1 keeps one for each failure
    // in end2end/test-results.
    trace: process.env.RIVET_E2E_TRACE ? 'retain-on-failure' : 'off',
    ...chromium,
  },
  projects: [{ name: 'chromium', use: { browserName: 'chromium' } }],
  webServer: slots.flatMap(servers),
});
