// The few calls Rivet makes on `@webcontainer/api`, flattened for
// wasm-bindgen. The package itself is imported only when a WebContainer
// project boots, from the IDE's own origin.

let booting = null;

export function wcBoot(url) {
  if (!booting) {
    booting = import(url).then((m) =>
      m.WebContainer.boot({ coep: 'credentialless', workdirName: 'project' }),
    );
    booting.catch(() => {
      booting = null;
    });
  }
  return booting;
}

export function wcReadFile(wc, path) {
  return wc.fs.readFile(path);
}

export function wcWriteFile(wc, path, data) {
  return wc.fs.writeFile(path, data);
}

export function wcMkdir(wc, path) {
  return wc.fs.mkdir(path, { recursive: true });
}

export function wcRm(wc, path) {
  return wc.fs.rm(path, { recursive: true, force: true });
}

export function wcRename(wc, from, to) {
  return wc.fs.rename(from, to);
}

// [[name, "file" | "dir" | "other"], ...]
export async function wcReaddir(wc, path) {
  const entries = await wc.fs.readdir(path, { withFileTypes: true });
  return entries.map((e) => [e.name, e.isDirectory() ? 'dir' : e.isFile() ? 'file' : 'other']);
}

// Calls `listener(path)` for every change under the project; returns a
// function that stops watching.
export function wcWatch(wc, listener) {
  const watcher = wc.fs.watch('.', { recursive: true }, (_event, name) => listener(String(name)));
  return () => watcher.close();
}

// `listener(port, open, url)` for 'port', `listener(port, true, url)` for
// 'server-ready', `listener(message)` for 'error'.
export function wcOn(wc, event, listener) {
  if (event === 'port') {
    return wc.on('port', (port, type, url) => listener(port, type === 'open', url));
  }
  if (event === 'server-ready') {
    return wc.on('server-ready', (port, url) => listener(port, true, url));
  }
  return wc.on('error', (error) => listener(String(error && error.message ? error.message : error)));
}

// Runs `command` with jsh; `onOutput(text)` receives its terminal output.
export async function wcSpawn(wc, command, cols, rows, onOutput) {
  const process = await wc.spawn('jsh', ['-c', command], { terminal: { cols, rows } });
  process.output.pipeTo(new WritableStream({ write: (chunk) => onOutput(chunk) })).catch(() => {});
  const input = process.input.getWriter();
  return {
    exit: process.exit,
    kill: () => process.kill(),
    write: (text) => input.write(text),
    close: () => input.close().catch(() => {}),
    resize: (c, r) => process.resize({ cols: c, rows: r }),
  };
}
