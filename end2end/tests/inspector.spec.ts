import { expect, test, type Frame, type Page } from './fixtures';
import fs from 'node:fs';
import path from 'node:path';

// The preview's element inspector (src/server/sandbox/preview/inspector.js)
// on its own, in real Chromium, without the IDE: its selector builder and
// source finder on pages set here, and its select mode in a page framed by
// a stand-in for the IDE's page (two origins served by routes).
const INSPECTOR = fs.readFileSync(
  path.join(__dirname, '../../src/server/sandbox/preview/inspector.js'),
  'utf8',
);
const IDE = 'http://ide.test';
const APP = 'http://app.test';

/** A page with `body`, and the inspector's functions on `globalThis`. */
async function load(page: Page, body: string) {
  await page.setContent(`<!doctype html><html><head></head><body>${body}</body></html>`);
  // Not framed: the script only exposes its functions for tests.
  await page.addScriptTag({ content: `globalThis.__rivetIdeOrigin=${JSON.stringify(IDE)};${INSPECTOR}` });
}

/** `selectorOf` of the element `css` finds. */
async function selectorOf(page: Page, css: string): Promise<string> {
  return page.evaluate((css) => {
    const el = document.querySelector(css);
    return (globalThis as any).__rivetInspector.selectorOf(el);
  }, css);
}

/** `sourceOf` of the element `css` finds, after `setup` gave it framework data. */
async function sourceOf(page: Page, css: string, setup: string) {
  return page.evaluate(
    ({ css, setup }) => {
      const el = document.querySelector(css) as any;
      new Function('el', setup)(el);
      return (globalThis as any).__rivetInspector.sourceOf(el);
    },
    { css, setup },
  );
}

const SAMPLE = `
  <header><nav><a href="#a">A</a><a href="#b">B</a><a href="#c">C</a></nav></header>
  <main id="root">
    <div class="card"><h2>One</h2><p>first</p><p>second <b>bold</b></p></div>
    <div class="card wide"><h2>Two</h2><ul><li>a</li><li class="done">b</li><li>c</li></ul></div>
    <section id="twin"><span>x</span></section>
    <section id="twin"><span>y</span></section>
    <div class="w-1/2 hover:bg-red-500 1st [&>p]:mt-2"><p>odd classes</p></div>
    <table><tbody><tr><td>1</td><td>2</td></tr><tr><td>3</td><td>4</td></tr></tbody></table>
    <my-widget><button type="button">go</button></my-widget>
    <svg width="10" height="10"><defs><linearGradient id="g"></linearGradient></defs><circle r="4"></circle><circle r="2"></circle></svg>
  </main>
  <footer><p>end</p></footer>`;

test('an id unique in the document stops the selector path', async ({ page }) => {
  await load(page, SAMPLE);
  expect(await selectorOf(page, '#root h2')).toBe('#root > div.card:nth-of-type(1) > h2');
  expect(await selectorOf(page, '#root')).toBe('#root');
  // Two sections share an id: the path goes on up.
  expect(await selectorOf(page, 'section:nth-of-type(2) span')).toBe('#root > section:nth-of-type(2) > span');
});

test('same-tag siblings are told apart by nth-of-type, and classes name each step', async ({ page }) => {
  await load(page, SAMPLE);
  expect(await selectorOf(page, 'nav a:nth-child(2)')).toBe('body > header > nav > a:nth-of-type(2)');
  expect(await selectorOf(page, 'li.done')).toBe('#root > div.card.wide:nth-of-type(2) > ul > li.done:nth-of-type(2)');
  expect(await selectorOf(page, 'footer p')).toBe('body > footer > p');
});

test('classes with odd characters are escaped', async ({ page }) => {
  await load(page, SAMPLE);
  const selector = await selectorOf(page, '#root > div:nth-of-type(3) > p');
  expect(selector).toContain('.w-1\\/2');
  expect(selector).toContain('.hover\\:bg-red-500');
  expect(selector).toContain('.\\31 st');
  const found = await page.evaluate((s) => document.querySelector(s)?.textContent, selector);
  expect(found).toBe('odd classes');
});

test('every element of a page is found again by its selector', async ({ page }) => {
  await load(page, SAMPLE);
  const misses = await page.evaluate(() => {
    const { selectorOf } = (globalThis as any).__rivetInspector;
    return Array.from(document.body.querySelectorAll('*'))
      .map((el) => ({ el, selector: selectorOf(el) as string }))
      .filter(({ el, selector }) => document.querySelector(selector) !== el)
      .map(({ el, selector }) => `${el.localName}: ${selector}`);
  });
  expect(misses).toEqual([]);
});

test('an element is described with its text collapsed, its html cut and its box in whole pixels', async ({ page }) => {
  const long = 'x'.repeat(3000);
  await load(
    page,
    `<div id="box" class="a b" style="position:absolute;left:10.4px;top:20.6px;width:100.2px;height:50px">
       Hello
       <b>big</b>   world<i data-long="${long}"></i></div>`,
  );
  const element = await page.evaluate(() =>
    (globalThis as any).__rivetInspector.describe(document.getElementById('box')),
  );
  expect(element).toMatchObject({
    selector: '#box',
    tag: 'div',
    id: 'box',
    classes: ['a', 'b'],
    text: 'Hello big world',
    rect: { x: 10, y: 21, width: 100, height: 50 },
    source: null,
  });
  expect(Buffer.byteLength(element.html)).toBeLessThanOrEqual(2048);
  expect(element.html.startsWith('<div id="box"')).toBe(true);
});

test('a React dev build names the source through the fiber and its owners', async ({ page }) => {
  await load(page, '<div id="app"><button class="counter">count is 0</button><p>plain</p></div>');
  const own = await sourceOf(
    page,
    'button',
    `el.__reactFiber$abc = { _debugSource: { fileName: '/home/project/src/App.jsx', lineNumber: 12, columnNumber: 5 } };`,
  );
  expect(own).toEqual({ file: '/home/project/src/App.jsx', line: 12, column: 5 });
  const owner = await sourceOf(
    page,
    'p',
    `el['__reactFiber$xyz'] = { _debugSource: null, _debugOwner: { _debugSource: { fileName: 'src/Card.tsx', lineNumber: 3 } } };`,
  );
  expect(owner).toEqual({ file: 'src/Card.tsx', line: 3, column: null });
  expect(await sourceOf(page, '#app', '')).toBeNull();
});

test('a Vue dev build names the component file, a Svelte one the place', async ({ page }) => {
  await load(page, '<div id="vue"><span>v</span></div><div id="svelte">s</div>');
  const vue = await sourceOf(
    page,
    '#vue span',
    `el.__vueParentComponent = { type: {}, parent: { type: { __file: '/home/project/src/components/Hello.vue' } } };`,
  );
  expect(vue).toEqual({ file: '/home/project/src/components/Hello.vue', line: null, column: null });
  const svelte = await sourceOf(
    page,
    '#svelte',
    `el.__svelte_meta = { loc: { file: 'src/App.svelte', line: 7, column: 2 } };`,
  );
  expect(svelte).toEqual({ file: 'src/App.svelte', line: 7, column: 2 });
});

// Select mode, in a page the stand-in IDE frames.

const APP_PAGE = `<!doctype html><html><head><script data-rivet-ide="${IDE}">${INSPECTOR}</script></head>
<body style="margin:0">
  <h1 style="margin:0">Hello there</h1>
  <button id="count" class="counter" style="box-sizing:border-box;width:120px;height:40px">count is 0</button>
  <div class="card"><span>nested</span> text</div>
  <script>
    window.appEvents = 0;
    document.getElementById('count').addEventListener('click', (e) => {
      e.target.textContent = 'count is ' + (Number(e.target.textContent.split(' ').pop()) + 1);
    });
    document.addEventListener('keydown', () => window.appEvents++);
  </script>
</body></html>`;

const IDE_PAGE = `<!doctype html><html><body style="margin:0">
  <iframe id="preview" src="${APP}/" style="width:800px;height:600px;border:0"></iframe>
  <script>
    window.received = [];
    addEventListener('message', (e) => {
      if (e.origin === '${APP}') window.received.push(e.data);
    });
    window.select = (on) =>
      document.getElementById('preview').contentWindow.postMessage({ source: 'rivet-ide', kind: 'select', on }, '${APP}');
  </script>
</body></html>`;

/** The stand-in IDE's page, framing the app; the app's frame. */
async function framed(page: Page): Promise<Frame> {
  await page.route(
    (url) => url.origin === IDE,
    (route) => route.fulfill({ contentType: 'text/html', body: IDE_PAGE }),
  );
  await page.route(
    (url) => url.origin === APP,
    (route) => route.fulfill({ contentType: 'text/html', body: APP_PAGE }),
  );
  await page.goto(`${IDE}/`);
  const frame = page.frame({ url: `${APP}/` });
  if (!frame) throw new Error('the app frame did not load');
  await expect(frame.locator('h1')).toHaveText('Hello there');
  return frame;
}

async function received(page: Page): Promise<any[]> {
  return page.evaluate(() => (window as any).received);
}

async function select(page: Page, on: boolean) {
  await page.evaluate((on) => (window as any).select(on), on);
}

test('a click in select mode posts the element to the IDE and the app never sees it', async ({ page }) => {
  const frame = await framed(page);
  await select(page, true);
  const overlay = frame.locator('[data-rivet-inspector]');
  await expect(async () => {
    await frame.locator('#count').hover();
    await expect(overlay).toHaveText('button 120×40', { timeout: 1000 });
  }).toPass();
  await frame.locator('#count').click();
  await expect.poll(() => received(page)).toHaveLength(1);
  const [message] = await received(page);
  expect(message).toMatchObject({
    source: 'rivet-preview',
    kind: 'selected',
    element: { selector: '#count', tag: 'button', id: 'count', classes: ['counter'], text: 'count is 0' },
  });
  await expect(overlay).toHaveCount(0);
  // Select mode is off again: the next click is the app's.
  await frame.locator('#count').click();
  await expect(frame.locator('#count')).toHaveText('count is 1');
  expect(await received(page)).toHaveLength(1);
});

test('escape cancels select mode, and only the IDE origin can turn it on', async ({ page }) => {
  const frame = await framed(page);
  // The app's own page cannot turn it on.
  await frame.evaluate(() => window.postMessage({ source: 'rivet-ide', kind: 'select', on: true }, '*'));
  await frame.locator('h1').hover();
  await page.waitForTimeout(200);
  await expect(frame.locator('[data-rivet-inspector]')).toHaveCount(0);
  await select(page, true);
  await expect(async () => {
    await frame.locator('h1').hover();
    await expect(frame.locator('[data-rivet-inspector]')).toHaveCount(1, { timeout: 1000 });
  }).toPass();
  // Keys go to the frame that has the focus.
  await frame.locator('#count').focus();
  await page.keyboard.press('Escape');
  await expect.poll(() => received(page)).toEqual([{ source: 'rivet-preview', kind: 'select-cancelled' }]);
  await expect(frame.locator('[data-rivet-inspector]')).toHaveCount(0);
});

test('a double-click edits a text element in place and reports the old and new text', async ({ page }) => {
  const frame = await framed(page);
  await select(page, true);
  await expect(async () => {
    await frame.locator('h1').hover();
    await expect(frame.locator('[data-rivet-inspector]')).toHaveCount(1, { timeout: 1000 });
  }).toPass();
  await frame.locator('h1').dblclick();
  await expect(frame.locator('h1')).toHaveAttribute('contenteditable', /.+/);
  await page.keyboard.type('Goodbye');
  await page.keyboard.press('Enter');
  await expect.poll(() => received(page)).toHaveLength(1);
  const [message] = await received(page);
  expect(message).toMatchObject({
    source: 'rivet-preview',
    kind: 'text-edited',
    element: { tag: 'h1', text: 'Hello there' },
    old_text: 'Hello there',
    new_text: 'Goodbye',
  });
  await expect(frame.locator('h1')).toHaveText('Goodbye');
  await expect(frame.locator('h1')).not.toHaveAttribute('contenteditable');
  expect(await frame.evaluate(() => (window as any).appEvents)).toBe(0);
});

test('escape while editing puts the old text back', async ({ page }) => {
  const frame = await framed(page);
  await select(page, true);
  await expect(async () => {
    await frame.locator('h1').hover();
    await expect(frame.locator('[data-rivet-inspector]')).toHaveCount(1, { timeout: 1000 });
  }).toPass();
  await frame.locator('h1').dblclick();
  await expect(frame.locator('h1')).toHaveAttribute('contenteditable', /.+/);
  await page.keyboard.type('Something else');
  await page.keyboard.press('Escape');
  await expect(frame.locator('h1')).toHaveText('Hello there');
  await expect.poll(() => received(page)).toEqual([{ source: 'rivet-preview', kind: 'select-cancelled' }]);
});
