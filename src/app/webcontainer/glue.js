// The few calls Rivet makes on `@webcontainer/api`, flattened for
// wasm-bindgen. The package itself is imported only when a WebContainer
// project boots, from the IDE's own origin.

let booting = null;

export function wcBoot(url) {
  if (!booting) {
    booting = import(url).then(async (m) => {
      // `forwardPreviewErrors`: the previews' uncaught exceptions, unhandled
      // rejections and console errors arrive as 'preview-message' events.
      const wc = await m.WebContainer.boot({ coep: 'credentialless', workdirName: 'project', forwardPreviewErrors: true });
      await setInspector(wc);
      return wc;
    });
    booting.catch(() => {
      booting = null;
    });
  }
  return booting;
}

// The preview's Select tool runs in every preview page, as the sandbox's
// preview proxy puts it into its pages; told the IDE's origin, it posts
// what is selected to this page only.
async function setInspector(wc) {
  try {
    const response = await fetch('/api/preview/inspector.js');
    if (!response.ok) throw new Error(`the inspector did not load (${response.status})`);
    const ide = JSON.stringify(location.origin);
    await wc.setPreviewScript(`globalThis.__rivetIdeOrigin = ${ide};\n${await response.text()}`);
  } catch (error) {
    console.warn('Select in the preview is not available:', error);
  }
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
// 'server-ready', `listener(json)` for 'preview-message' (the message as
// JSON), `listener(message)` for 'error'.
export function wcOn(wc, event, listener) {
  if (event === 'port') {
    return wc.on('port', (port, type, url) => listener(port, type === 'open', url));
  }
  if (event === 'server-ready') {
    return wc.on('server-ready', (port, url) => listener(port, true, url));
  }
  if (event === 'preview-message') {
    return wc.on('preview-message', (message) => listener(previewMessageJson(message)));
  }
  return wc.on('error', (error) => listener(String(error && error.message ? error.message : error)));
}

// A console error's arguments may hold what JSON cannot write (a cycle, a
// BigInt): those are written with String().
function previewMessageJson(message) {
  try {
    return JSON.stringify(message);
  } catch {
    const args = Array.isArray(message.args) ? message.args : [];
    return JSON.stringify({
      ...message,
      args: args.map((arg) => {
        try {
          JSON.stringify(arg);
          return arg;
        } catch {
          return String(arg);
        }
      }),
    });
  }
}

// Runs `command` with jsh; `onOutput(text)` receives its terminal output.
export async function wcSpawn(wc, command, cols, rows, onOutput) {
  const process = await wc.spawn('jsh', ['-c', command], { terminal: { cols, rows } });
  return processHandle(process, onOutput);
}

// How long a shell waits for the page's WebContainer to boot (as long as
// the driver does).
const SHELL_BOOT_TIMEOUT_MS = 60_000;

// An interactive jsh in the page's one WebContainer, on a terminal of
// `cols` x `rows`; waits for the boot (started here if nothing started it
// yet). `onOutput(text)` receives its output. Rejects when the boot fails.
export async function wcShell(url, cols, rows, onOutput) {
  let timer = null;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`the WebContainer did not boot: timed out after ${SHELL_BOOT_TIMEOUT_MS / 1000} s`)),
      SHELL_BOOT_TIMEOUT_MS,
    );
  });
  let wc;
  try {
    wc = await Promise.race([wcBoot(url), timeout]);
  } finally {
    clearTimeout(timer);
  }
  const process = await wc.spawn('jsh', { terminal: { cols, rows } });
  const handle = processHandle(process, onOutput);
  // Keystrokes after the shell ended go nowhere.
  return { ...handle, write: (text) => handle.write(text).catch(() => {}) };
}

function processHandle(process, onOutput) {
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
