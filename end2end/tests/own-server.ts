import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bin, serveEnv } from '../serve-env';
import { TOKEN } from './helpers';

const root = path.resolve(__dirname, '..', '..');

/** A `rivet serve` of the test's own, on its own data directory and port,
 *  for tests that stop the server (the suite's shared server must live on).
 *  It talks to the suite's scripted provider and logs in with its token. */
export class OwnServer {
  private child?: ChildProcess;
  private dir?: string;

  constructor(readonly port: number) {}

  /** Its data directory, made when the server first starts (a spec file is
   *  loaded by the runner and every worker, and only one of them starts it)
   *  and kept across restarts until [`dispose`](#dispose). */
  get dataDir(): string {
    this.dir ??= fs.mkdtempSync(path.join(os.tmpdir(), 'rivet-e2e-own-'));
    return this.dir;
  }

  url(p: string): string {
    return `http://127.0.0.1:${this.port}${p}`;
  }

  /** Starts `rivet serve` and waits until it answers `/healthz`. */
  async start(): Promise<void> {
    const log = fs.openSync(path.join(this.dataDir, 'serve.log'), 'a');
    this.child = spawn(bin, ['serve'], {
      cwd: root,
      stdio: ['ignore', log, log],
      env: {
        ...process.env,
        ...serveEnv({
          port: this.port,
          dataDir: this.dataDir,
          token: TOKEN,
          llmBaseUrl: `${process.env.RIVET_E2E_MOCK}/v1`,
        }),
      },
    });
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (this.child.exitCode !== null) break;
      try {
        if ((await fetch(this.url('/healthz'))).ok) return;
      } catch {
        // Not listening yet.
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    const out = fs.readFileSync(path.join(this.dataDir, 'serve.log'), 'utf8');
    throw new Error(`rivet serve on port ${this.port} did not start:\n${out}`);
  }

  /** Kills the server and removes its data directory. */
  async dispose(): Promise<void> {
    await this.kill();
    if (this.dir) fs.rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }

  /** Kills the server with SIGKILL: no shutdown of any kind. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }
}
