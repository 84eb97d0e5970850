import { expect, test, type Request } from './fixtures';
import fs from 'node:fs';
import path from 'node:path';
import { coldPage, newProject } from './helpers';

// A first visit, as a browser with an empty cache sees it: every response of
// every request made before the chat takes a message (HTML, CSS, JS, WASM,
// fonts, workers' fetches), counted as it crossed the wire (compressed body
// plus headers). The panes' code (Monaco, xterm, the workbench's chunk) must
// come later, when shown or once the chat is usable.
const LIMIT = 400 * 1024;

test('a cold first visit fetches at most 400 KiB before the chat takes a message', async ({ page, browser }) => {
  const project = await newProject(page);
  const { cold, close } = await coldPage(browser, page);
  try {
    await cold.addInitScript(() => {
      // Stamps the moment the chat is hydrated, in the clock request timings use.
      new MutationObserver((_, observer) => {
        if (document.body?.dataset.chatReady === 'true') {
          (window as unknown as { chatReadyAt: number }).chatReadyAt = Date.now();
          observer.disconnect();
        }
      }).observe(document, { attributes: true, subtree: true, attributeFilter: ['data-chat-ready'] });
    });
    // Every request, with its size once it has finished; a stream that stays
    // open (the conversation's events) never finishes and is listed apart.
    const asked: { request: Request; bytes?: number; stream?: boolean }[] = [];
    cold.on('request', (request) => void asked.push({ request }));
    cold.on('response', (response) => {
      const entry = asked.find((a) => a.request === response.request());
      // Code and pages end; a feed (server-sent events, a streamed server
      // function) stays open for as long as the page shows.
      const type = response.headers()['content-type'] ?? '';
      if (entry) entry.stream = !/html|css|javascript|wasm|font|json|svg|image/.test(type);
    });
    // A request that finishes as the page closes has no sizes left to read:
    // it is not counted, and one asked before the chat was ready and never
    // sized keeps the poll below waiting, so it cannot pass unseen.
    cold.on('requestfinished', (request) => {
      request.sizes().then(
        (sizes) => {
          const entry = asked.find((a) => a.request === request);
          if (entry) entry.bytes = sizes.responseBodySize + sizes.responseHeadersSize;
        },
        () => undefined,
      );
    });
    await cold.goto(`/p/${project}`);
    await expect(cold.locator('body[data-chat-ready="true"]')).toBeAttached();
    const readyAt = await cold.evaluate(() => (window as unknown as { chatReadyAt: number }).chatReadyAt);
    const early = () => asked.filter((a) => a.request.timing().startTime <= readyAt);
    const isStream = (a: (typeof asked)[number]) => a.stream === true;
    // Whatever was asked for before that moment finishes.
    await expect
      .poll(() => early().filter((a) => a.bytes === undefined && !isStream(a)).map((a) => `${a.request.resourceType()} ${a.request.url()}`))
      .toEqual([]);
    const before = early()
      .filter((a) => a.bytes !== undefined)
      .map((a) => ({ url: a.request.url(), bytes: a.bytes! }));
    const streams = early()
      .filter((a) => a.bytes === undefined)
      .map((a) => `${new URL(a.request.url()).pathname} (${a.request.resourceType()})`);
    const total = before.reduce((sum, r) => sum + r.bytes, 0);
    const lines = before.map((r) => `${String(r.bytes).padStart(8)}  ${new URL(r.url).pathname}`);
    const report =
      `${total} bytes in ${before.length} responses before the chat took a message\n${lines.join('\n')}\n` +
      `open streams: ${streams.join(', ') || 'none'}\n`;
    fs.mkdirSync(path.join(__dirname, '..', 'test-results'), { recursive: true });
    fs.writeFileSync(path.join(__dirname, '..', 'test-results', 'first-load.txt'), report);
    console.log(report);
    expect(total, report).toBeLessThanOrEqual(LIMIT);
    // Nothing of Monaco or xterm was fetched for the chat.
    expect(before.filter((r) => r.url.includes('/vendor/')), report).toEqual([]);

    // The panes still arrive: the editor and the terminal load once shown.
    await expect(cold.locator('body[data-hydrated="true"]')).toBeAttached();
    await expect(cold.getByTestId('workbench-loading')).toBeHidden();
    await expect(cold.locator('.monaco-editor').first()).toBeAttached({ timeout: 60_000 });
    await expect(cold.locator('.xterm').first()).toBeAttached({ timeout: 60_000 });
  } finally {
    await close();
  }
});
