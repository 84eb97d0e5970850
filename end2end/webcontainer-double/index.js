// rivet-webcontainer-double: a stand-in for `@webcontainer/api`, served at
// /vendor/webcontainer/index.js only when a test sets
// RIVET_RUNTIME_WEBCONTAINER_DIR to this folder. It covers the surface
// Rivet uses and is honest about what matters: files are real files of the
// project on the server (the HTTP API), commands really run in the
// project's server sandbox (a terminal WebSocket per command, whose shell
// `exec`s the command, so its exit is the command's), and `port` and
// `server-ready` fire with the preview address once a server listens there
// (the project's session feed reports its ports). Its previews are the
// sandbox's preview proxy pages, whose injected reporter posts
// `{ source: 'rivet-preview', kind, message }` to this page; booted with
// `forwardPreviewErrors`, the double turns those into `preview-message`
// events of the real API's shape, as the real WebContainer's preview script
// does for its own previews.
//
// `setPreviewScript` keeps the script it is given; the double's previews
// are the proxy's pages, which already carry the same inspector, so what
// the preview posts to this page is what the real API's previews would.
//
// What it did is kept for tests in `globalThis.rivetWebContainerDouble`:
// `spawned` (each spawn's `{ command, args }`), `previewMessages` (each
// `preview-message` it emitted) and `previewScripts` (each script given).

export const DOUBLE = 'rivet-webcontainer-double';

const record = { spawned: [], previewMessages: [], previewScripts: [] };
globalThis.rivetWebContainerDouble = record;

const project = location.pathname.split('/')[2];
const api = (path) => `/api/v1/projects/${project}/files/${path.split('/').map(encodeURIComponent).join('/')}`;
let spawned = 0;

function clean(path) {
  return String(path).replace(/^\.\/?/, '').replace(/^\/+/, '').replace(/\/+$/, '');
}

function enoent(op, path) {
  return new Error(`ENOENT: no such file or directory, ${op} '${path}'`);
}

async function serverFunction(name, fields) {
  const response = await fetch(`/api/${name}`, { method: 'POST', body: new URLSearchParams(fields) });
  if (!response.ok) throw new Error(`${name}: ${response.status} ${await response.text()}`);
  return response;
}

const fs = {
  async readFile(path, encoding) {
    const response = await fetch(api(clean(path)));
    if (!response.ok) throw enoent('open', path);
    const bytes = new Uint8Array(await response.arrayBuffer());
    return encoding ? new TextDecoder().decode(bytes) : bytes;
  },
  async writeFile(path, data) {
    const response = await fetch(api(clean(path)), { method: 'PUT', body: data });
    if (!response.ok) throw new Error(`EIO: write '${path}': ${response.status} ${await response.text()}`);
  },
  async mkdir() {
    // Folders exist as soon as a file is written in them.
  },
  async rm(path) {
    const response = await fetch(api(clean(path)), { method: 'DELETE' });
    if (!response.ok && response.status !== 404) throw new Error(`EIO: rm '${path}': ${response.status}`);
  },
  async rename(from, to) {
    const content = await fs.readFile(from);
    await fs.writeFile(to, content);
    await fs.rm(from);
  },
  async readdir(path, options) {
    // One folder as the sandbox has it, the insides of dist/ and
    // node_modules/ included, as the real WebContainer's file system lists.
    const response = await fetch(`/api/v1/projects/${project}/files?dir=${encodeURIComponent(clean(path))}`);
    if (!response.ok) throw enoent('scandir', path);
    const { entries } = await response.json();
    const list = entries.map((entry) => ({
      name: entry.path.split('/').pop(),
      isDirectory: () => entry.kind === 'dir',
      isFile: () => entry.kind === 'file',
    }));
    return options && options.withFileTypes ? list : list.map((e) => e.name);
  },
  watch() {
    return { close() {} };
  },
};

/** A command run by a fresh shell of the project's sandbox. */
async function spawnInSandbox(command, args, options) {
  record.spawned.push({ command, args: args.map(String) });
  // WebContainer's shell is jsh; the sandbox's is bash. `jsh` alone is an
  // interactive shell, as `bash` on the terminal is.
  const program = command === 'jsh' ? 'bash' : command;
  const interactive = command === 'jsh' && args.length === 0;
  const line = [program, ...args].map((a) => `'${String(a).replace(/'/g, `'\\''`)}'`).join(' ');
  const size = (options && options.terminal) || { cols: 120, rows: 30 };
  spawned += 1;
  const name = `wc${Date.now().toString(36)}${spawned}`;
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  const socket = new WebSocket(
    `${scheme}://${location.host}/api/projects/${project}/terminals/${name}/ws?cols=${size.cols}&rows=${size.rows}`,
  );
  socket.binaryType = 'arraybuffer';
  let emit = null;
  const output = new ReadableStream({
    start(controller) {
      emit = controller;
    },
  });
  const decoder = new TextDecoder();
  const exit = new Promise((resolve) => {
    socket.onmessage = (message) => {
      if (typeof message.data === 'string') {
        const frame = JSON.parse(message.data);
        if (frame.type === 'exit') resolve(frame.code ?? 1);
        if (frame.type === 'error') {
          emit.enqueue(`${frame.message}\r\n`);
          resolve(1);
        }
        return;
      }
      emit.enqueue(decoder.decode(new Uint8Array(message.data), { stream: true }));
    };
    socket.onclose = () => resolve(1);
  });
  exit.then(() => {
    try {
      emit.close();
    } catch {}
    socket.close();
  });
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = () => reject(new Error('the sandbox terminal did not open'));
  });
  const send = (data) => socket.send(JSON.stringify({ type: 'input', data }));
  // `exec`: the shell becomes the command, so the terminal's exit is its exit.
  send(`exec ${line}\r`);
  return {
    exit,
    output,
    input: new WritableStream({ write: (chunk) => send(chunk) }),
    // An interactive shell ignores ^C; ^D on its empty line ends it.
    kill: () => send(interactive ? '\x03\x04' : '\x03'),
    resize: ({ cols, rows }) => socket.send(JSON.stringify({ type: 'resize', cols, rows })),
  };
}

/** The reporter's kinds as the real API's `PreviewMessageType`s. */
const PREVIEW_MESSAGE_TYPES = {
  error: 'PREVIEW_UNCAUGHT_EXCEPTION',
  rejection: 'PREVIEW_UNHANDLED_REJECTION',
  console: 'PREVIEW_CONSOLE_ERROR',
};

/** A reporter's post as the real API's `PreviewMessage`. */
function previewMessage(data, port) {
  const type = PREVIEW_MESSAGE_TYPES[data.kind];
  if (!type || typeof data.message !== 'string') return null;
  // A cross-origin frame's location is not the double's to read.
  const base = { type, previewId: String(port), port, pathname: '', search: '', hash: '' };
  if (type === 'PREVIEW_CONSOLE_ERROR') return { ...base, args: [data.message], stack: '' };
  // The reporter sends an error's stack, which begins with its message.
  const text =
    type === 'PREVIEW_UNHANDLED_REJECTION' ? data.message.replace(/^Unhandled promise rejection: /, '') : data.message;
  return { ...base, message: text.split('\n')[0], stack: text };
}

class WebContainerDouble {
  constructor(options) {
    this.fs = fs;
    this.workdir = '/home/project';
    this.listeners = { port: [], 'server-ready': [], 'preview-message': [], error: [] };
    this.ports = new Map();
    this.followPorts();
    if (options.forwardPreviewErrors) this.forwardPreviewErrors(options.forwardPreviewErrors);
  }

  /** Emits 'preview-message' for what the reporter of a preview posts. */
  forwardPreviewErrors(mode) {
    addEventListener('message', (event) => {
      const port = this.previewPort(event.origin);
      const data = event.data;
      if (port === null || !data || data.source !== 'rivet-preview') return;
      if (mode === 'exceptions-only' && data.kind === 'console') return;
      const message = previewMessage(data, port);
      if (!message) return;
      record.previewMessages.push(message);
      this.emit('preview-message', message);
    });
  }

  /** The port of the preview served at `origin` (by the server's name for
   *  it, or by this page's, which the preview pane uses), or null. */
  previewPort(origin) {
    for (const [port, url] of this.ports) {
      if (!url) continue;
      const address = new URL(url);
      const here = new URL(url);
      here.hostname = location.hostname;
      if (origin === address.origin || origin === here.origin) return port;
    }
    return null;
  }

  on(event, listener) {
    const list = this.listeners[event] || (this.listeners[event] = []);
    list.push(listener);
    return () => list.splice(list.indexOf(listener), 1);
  }

  emit(event, ...args) {
    for (const listener of this.listeners[event] || []) listener(...args);
  }

  async setPreviewScript(script) {
    if (typeof script !== 'string') throw new TypeError('setPreviewScript takes the script as a string');
    record.previewScripts.push(script);
  }

  spawn(command, args = [], options = {}) {
    if (!Array.isArray(args)) return spawnInSandbox(command, [], args);
    return spawnInSandbox(command, args, options);
  }

  async mount(tree, options = {}) {
    const walk = async (node, prefix) => {
      for (const [name, entry] of Object.entries(node)) {
        const path = prefix ? `${prefix}/${name}` : name;
        if (entry.directory) await walk(entry.directory, path);
        else if (entry.file) await fs.writeFile(path, entry.file.contents);
      }
    };
    await walk(tree, clean(options.mountPoint || ''));
  }

  /** Ports listening in the sandbox, from the project's session feed. */
  async followPorts() {
    for (;;) {
      try {
        const response = await serverFunction('session_feed', { project });
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        let buffered = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffered += decoder.decode(value, { stream: true });
          const lines = buffered.split('\n');
          buffered = lines.pop();
          for (const line of lines) if (line) await this.sawEvent(JSON.parse(line));
        }
      } catch (error) {
        this.emit('error', { message: String(error) });
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }

  async sawEvent(event) {
    const listening = (port) => this.opened(port);
    if (event.type === 'snapshot') for (const preview of event.state.previews) await listening(preview.port);
    if (event.type === 'preview_opened') await listening(event.preview.port);
    if (event.type === 'preview_closed' && this.ports.delete(event.port)) {
      this.emit('port', event.port, 'close', '');
    }
  }

  async opened(port) {
    if (this.ports.has(port)) return;
    this.ports.set(port, '');
    const response = await serverFunction('open_preview', { project, port: String(port) });
    const url = await response.json();
    this.ports.set(port, url);
    this.emit('port', port, 'open', url);
    this.emit('server-ready', port, url);
  }
}

let instance = null;

export class WebContainer {
  static async boot(options = {}) {
    if (options.coep !== 'credentialless') throw new Error('Rivet boots with coep: credentialless');
    if (!crossOriginIsolated) throw new Error('SharedArrayBuffer needs cross-origin isolation');
    if (instance) throw new Error('Only a single WebContainer instance can be booted');
    instance = new WebContainerDouble(options);
    return instance;
  }
}
