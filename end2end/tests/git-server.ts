import { spawn, spawnSync } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';

/** Runs `git` in `dir` with none of the host's configuration. */
export function git(dir: string, args: string[]): string {
  const run = spawnSync('git', args, {
    cwd: dir,
    env: {
      PATH: process.env.PATH,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_AUTHOR_NAME: 'Someone Else',
      GIT_AUTHOR_EMAIL: 'else@example.com',
      GIT_COMMITTER_NAME: 'Someone Else',
      GIT_COMMITTER_EMAIL: 'else@example.com',
    },
  });
  if (run.status !== 0) throw new Error(`git ${args.join(' ')}: ${run.stderr}`);
  return run.stdout.toString().trim();
}

/** An empty bare repository `app.git` under `root`, served by git's own
 *  smart-HTTP program (`git http-backend`, as CGI) on loopback. */
export async function gitServer(root: string) {
  git(root, ['init', '-q', '--bare', '-b', 'main', 'app.git']);
  git(path.join(root, 'app.git'), ['config', 'http.receivepack', 'true']);
  const server = http.createServer((request, response) => {
    const url = new URL(request.url!, 'http://git');
    const body: Buffer[] = [];
    request.on('data', (chunk) => body.push(chunk));
    request.on('end', () => {
      const input = Buffer.concat(body);
      const cgi = spawn('git', ['http-backend'], {
        env: {
          PATH: process.env.PATH,
          GIT_PROJECT_ROOT: root,
          GIT_HTTP_EXPORT_ALL: '1',
          GIT_CONFIG_NOSYSTEM: '1',
          GIT_CONFIG_GLOBAL: '/dev/null',
          REQUEST_METHOD: request.method,
          PATH_INFO: url.pathname,
          QUERY_STRING: url.search.slice(1),
          CONTENT_TYPE: request.headers['content-type'] ?? '',
          CONTENT_LENGTH: String(input.length),
          HTTP_CONTENT_ENCODING: String(request.headers['content-encoding'] ?? ''),
          GIT_PROTOCOL: String(request.headers['git-protocol'] ?? ''),
          REMOTE_USER: 'bench',
          REMOTE_ADDR: '127.0.0.1',
        },
      });
      const out: Buffer[] = [];
      cgi.stdout.on('data', (chunk) => out.push(chunk));
      cgi.on('close', () => {
        const all = Buffer.concat(out);
        let at = all.indexOf('\r\n\r\n');
        let gap = 4;
        if (at < 0) [at, gap] = [all.indexOf('\n\n'), 2];
        let status = 200;
        for (const line of all.subarray(0, at).toString().split(/\r?\n/)) {
          const [name, ...rest] = line.split(':');
          if (name.toLowerCase() === 'status') status = parseInt(rest.join(':').trim(), 10);
          else if (name) response.setHeader(name, rest.join(':').trim());
        }
        response.writeHead(status);
        response.end(all.subarray(at + gap));
      });
      // A CGI may answer without reading all of its input (git reports an
      // error so); the answer, not a broken pipe, is what the test sees.
      cgi.stdin.on('error', () => {});
      cgi.stderr.on('data', (chunk) => process.stderr.write(`git http-backend: ${chunk}`));
      cgi.stdin.end(input);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}/app.git`, close: () => server.close() };
}

