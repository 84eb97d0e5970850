import path from 'node:path';

const root = path.resolve(__dirname, '..');
// The server under test: scripts/test.sh names its `ci` build; by itself the
// suite runs the release one (`cargo leptos build --release`).
export const bin = process.env.RIVET_E2E_BIN ?? path.join(root, 'target/release/rivet');

/** The environment of a release `rivet serve` under test: its address,
 *  data directory and access token, the scripted provider it asks, and the
 *  built site it serves. The suite's server, the benchmarks' server and the
 *  tests that run a server of their own all start from it. */
export function serveEnv(server: {
  port: number;
  dataDir: string;
  token: string;
  llmBaseUrl: string;
}): Record<string, string> {
  return {
    RIVET_SERVER_ADDR: `127.0.0.1:${server.port}`,
    RIVET_SERVER_DATA_DIR: server.dataDir,
    RIVET_SERVER_TOKEN: server.token,
    RIVET_LLM_PROVIDER: 'custom',
    RIVET_LLM_BASE_URL: server.llmBaseUrl,
    RIVET_LLM_MODEL: 'rivet-replay',
    LEPTOS_OUTPUT_NAME: 'rivet',
    LEPTOS_SITE_ROOT: path.join(root, 'target/site'),
    LEPTOS_SITE_PKG_DIR: 'pkg',
    LEPTOS_ENV: 'PROD',
    RUST_LOG: 'warn,rivet=info',
  };
}

/** Playwright's web servers for one IDE under test: the scripted provider
 *  (answering `pace` characters every `delayMs`) and a built `rivet serve`
 *  asking it, with `extraEnv` on top of [`serveEnv`]. */
export function providerAndServer(server: {
  port: number;
  mockPort: number;
  dataDir: string;
  token: string;
  pace: { chunkSize: number; delayMs: number };
  extraEnv?: Record<string, string>;
}) {
  const { port, mockPort, dataDir, token, pace } = server;
  return [
    {
      command: `${bin} mock-llm --port ${mockPort} --models rivet-replay,rivet-lite --script ${root}/tests/fixtures/transcripts --chunk-size ${pace.chunkSize} --delay-ms ${pace.delayMs}`,
      port: mockPort,
      reuseExistingServer: false,
      timeout: 30_000,
    },
    {
      command: `${bin} serve`,
      cwd: root,
      url: `http://127.0.0.1:${port}/healthz`,
      reuseExistingServer: false,
      timeout: 240_000,
      stdout: 'pipe' as const,
      stderr: 'pipe' as const,
      env: {
        ...serveEnv({ port, dataDir, token, llmBaseUrl: `http://127.0.0.1:${mockPort}/v1` }),
        ...server.extraEnv,
      },
    },
  ];
}

/** A browser from the system, kept from reaching for Google's services on a
 *  closed network. */
function systemBrowser(executablePath: string) {
  return {
    viewport: { width: 1280, height: 720 },
    launchOptions: {
      executablePath,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  };
}

/** What the test suite drives: Chromium's headless shell (Debian's
 *  `chromium-headless-shell`, the browser Playwright itself runs headless
 *  tests in). An IDE page costs it about 1.4 s of CPU against 2.5 s for the
 *  whole browser, which took the suite from 3.1 to 2.5 minutes on 2 cores
 *  (2026-11-29). `RIVET_CHROMIUM` names another. */
export const chromium = systemBrowser(process.env.RIVET_CHROMIUM ?? '/usr/bin/chromium-headless-shell');

/** What the benchmarks drive: the whole browser a person runs (Debian's
 *  `chromium`), whose figures the README gives. */
export const fullChromium = systemBrowser(process.env.RIVET_CHROMIUM ?? '/usr/bin/chromium');
