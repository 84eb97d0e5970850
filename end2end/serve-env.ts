import path from 'node:path';

const root = path.resolve(__dirname, '..');

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
