import { expect, test, type Page } from './fixtures';
import { newProject, openIde, send, webcontainerProject } from './helpers';

// Pointing instead of describing: select an element of the preview (both
// runtimes), edit a text in place without the model, attach an image.

const APP_READY = 120_000;
const MOCK = () => process.env.RIVET_E2E_MOCK!;

/** A 1×1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==',
  'base64',
);

type LogEntry = { last_user: string; images?: string[] };

async function log(): Promise<LogEntry[]> {
  return (await fetch(`${MOCK()}/mock/log`)).json();
}

async function counterPage(page: Page) {
  await send(page, 'build the counter page');
  const app = page.frameLocator('[data-testid="preview-frame"]');
  await expect(app.locator('button.counter')).toBeVisible({ timeout: APP_READY });
  return app;
}

/** Selects the counter's button with the preview's Select tool. */
async function selectButton(page: Page, app: ReturnType<Page['frameLocator']>) {
  const toggle = page.getByTestId('preview-select');
  await toggle.click();
  await expect(toggle).toHaveAttribute('aria-pressed', 'true');
  await app.locator('button.counter').hover();
  await expect(app.locator('[data-rivet-inspector]')).toContainText('button');
  await app.locator('button.counter').click();
  await expect(toggle).toHaveAttribute('aria-pressed', 'false');
  // The click selected; the app did not count it.
  await expect(app.locator('button.counter')).toHaveText('count is 0');
  const chip = page.getByTestId('composer-selection');
  await expect(chip).toHaveCount(1);
  await expect(chip).toContainText('button');
}

async function sendWithSelection(page: Page) {
  const before = (await log()).length;
  await send(page, 'show me a snippet sample for this');
  await expect(page.getByTestId('message-user').last().getByTestId('message-selection')).toContainText('button');
  await expect.poll(async () => (await log()).length).toBeGreaterThan(before);
  const asked = (await log()).at(-1)!.last_user;
  expect(asked).toContain('show me a snippet sample for this');
  expect(asked).toContain('<selected_element>');
  expect(asked).toContain('button.counter');
  expect(asked).toContain('count is 0');
  // The composer is empty again.
  await expect(page.getByTestId('composer-selection')).toHaveCount(0);
}

test('a selected element of the preview reaches the model as a structured block', async ({ page }) => {
  await newProject(page);
  const app = await counterPage(page);
  await selectButton(page, app);
  await sendWithSelection(page);
  // Escape cancels the Select mode.
  const toggle = page.getByTestId('preview-select');
  await toggle.click();
  await expect(toggle).toHaveAttribute('aria-pressed', 'true');
  await app.locator('body').press('Escape');
  await expect(toggle).toHaveAttribute('aria-pressed', 'false');
  // A page the frame loads again is told that Select is on.
  await toggle.click();
  const reloaded = page.waitForEvent('framenavigated', (frame) => frame !== page.mainFrame());
  await page.getByTestId('preview-reload').click();
  await reloaded;
  await expect(app.locator('button.counter')).toBeVisible();
  await app.locator('#title').hover();
  await expect(app.locator('[data-rivet-inspector]')).toContainText('h1');
  await app.locator('body').press('Escape');
  await expect(toggle).toHaveAttribute('aria-pressed', 'false');
});

test('a text edited in the preview lands in its file without the model', async ({ page }) => {
  const project = await newProject(page);
  const app = await counterPage(page);
  const asked = (await log()).length;
  await page.getByTestId('preview-select').click();
  const title = app.locator('#title');
  await title.dblclick();
  await page.keyboard.press('Control+A');
  await page.keyboard.type('Tally page');
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('preview-select-status')).toContainText('Changed index.html');
  const file = await page.evaluate(async (p) => (await fetch(`/api/v1/projects/${p}/files/index.html`)).text(), project);
  expect(file).toContain('<h1 id="title">Tally page</h1>');
  expect(file).not.toContain('Counter page');
  expect((await log()).length).toBe(asked);
});

test('an attached image reaches the model byte for byte and is there after a reload', async ({ page }) => {
  const project = await newProject(page);
  await page.getByTestId('composer-attach').setInputFiles({ name: 'shot.png', mimeType: 'image/png', buffer: PNG });
  await expect(page.getByTestId('composer-image')).toHaveCount(1);
  await send(page, 'show me a snippet sample like this image');
  await expect(page.getByTestId('message-assistant').last()).toHaveAttribute('data-status', 'complete', {
    timeout: APP_READY,
  });
  const last = (await log()).at(-1)!;
  expect(last.images).toEqual([`data:image/png;base64,${PNG.toString('base64')}`]);
  await expect(page.getByTestId('composer-image')).toHaveCount(0);
  // A file that is not an image is refused in the composer.
  await page.getByTestId('composer-attach').setInputFiles({ name: 'page.html', mimeType: 'text/html', buffer: Buffer.from('<p>') });
  await expect(page.getByTestId('composer-attach-error')).toContainText('PNG, JPEG, WebP or GIF');
  await openIde(page, `/p/${project}`);
  const shown = page.getByTestId('message-image');
  await expect(shown).toHaveCount(1);
  const bytes = await shown.evaluate(async (img: HTMLImageElement) => {
    const response = await fetch(img.src);
    return Array.from(new Uint8Array(await response.arrayBuffer()));
  });
  expect(Buffer.from(bytes)).toEqual(PNG);
});

test('Select works on a WebContainer project through the preview script', async ({ page }) => {
  await webcontainerProject(page);
  const app = await counterPage(page);
  // The IDE gave the WebContainer the inspector as its preview script,
  // told the IDE's origin.
  const scripts: string[] = await page.evaluate(() => (globalThis as any).rivetWebContainerDouble.previewScripts);
  expect(scripts).toHaveLength(1);
  expect(scripts[0]).toContain(`globalThis.__rivetIdeOrigin = ${JSON.stringify(new URL(page.url()).origin)}`);
  expect(scripts[0]).toContain('rivet-inspector');
  await selectButton(page, app);
  await sendWithSelection(page);
});
