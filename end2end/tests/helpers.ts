import { expect, test, type Browser, type Page } from '@playwright/test';
import path from 'node:path';

/** The IDE's access token (set by playwright.config.ts). */
export const TOKEN = process.env.RIVET_E2E_TOKEN!;

/** Opens `path` logged in: `?token=` sets the session cookie, and the IDE
 *  redirects to the same path without the token. */
export async function login(page: Page, path = '/') {
  const separator = path.includes('?') ? '&' : '?';
  return page.goto(`${path}${separator}token=${TOKEN}`);
}

/** Opens the IDE, logged in, and waits until the WASM bundle has hydrated the page.
 *  `/new` (the default) opens a fresh project: the browser context logs in
 *  and posts to `/new` as the projects page's button does (with the IDE's
 *  own Origin; a link to it creates nothing), then the page opens the
 *  project it was sent to. The button itself is tested in projects.spec.ts;
 *  going through the projects page here cost every test a page load. */
export async function openIde(page: Page, path = '/new') {
  if (path.endsWith('/new')) {
    const request = page.context().request;
    // `path` may name another server (a test's own, own-server.ts).
    const { origin } = new URL(path, test.info().project.use.baseURL);
    expect((await request.get(`${origin}/?token=${TOKEN}`, { maxRedirects: 0 })).status()).toBe(303);
    const created = await request.post(`${origin}/new`, { headers: { origin }, maxRedirects: 0 });
    expect(created.status(), await created.text()).toBe(303);
    const project = created.headers()['location'];
    expect(project).toMatch(/^\/p\/[a-z0-9]+$/);
    const response = await page.goto(`${origin}${project}`);
    await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
    return response;
  }
  const response = await login(page, path);
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  return response;
}

/** A page in a new browser context: an empty cache, logged in with the
 *  session cookie `from`'s context got from `login`. */
export async function coldPage(browser: Browser, from: Page) {
  const cookies = await from.context().cookies();
  const context = await browser.newContext({ storageState: { cookies, origins: [] } });
  return { cold: await context.newPage(), close: () => context.close() };
}

/** Opens a fresh project and returns its id. */
export async function newProject(page: Page): Promise<string> {
  await openIde(page, '/new');
  const id = new URL(page.url()).pathname.split('/').pop()!;
  expect(id).toMatch(/^[a-z0-9]+$/);
  return id;
}

/** A new project moved to the WebContainer runtime, reopened. */
export async function webcontainerProject(page: Page): Promise<string> {
  const project = await newProject(page);
  const status = await page.evaluate(async (p) => {
    const body = new URLSearchParams({ project: p, runtime: 'webcontainer' });
    return (await fetch('/api/set_project_runtime', { method: 'POST', body })).status;
  }, project);
  expect(status).toBe(200);
  await openIde(page, `/p/${project}`);
  await expect(page.getByTestId('runtime-status')).toHaveAttribute('data-runtime', 'webcontainer');
  return project;
}

export async function send(page: Page, text: string) {
  await page.getByTestId('chat-input').fill(text);
  await page.getByTestId('chat-send').click();
}

/** Queues faults for the scripted provider's next answers (give each a
 * `when`, so a request left running by an earlier test cannot take it). */
export async function queueFaults(faults: object | object[]) {
  const response = await fetch(`${process.env.RIVET_E2E_MOCK}/mock/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(faults),
  });
  expect(response.ok).toBe(true);
}

/** The action rows of the latest answer, of one kind. */
export function actions(page: Page, kind: string) {
  return page.getByTestId('message-assistant').last().locator(`[data-testid="action"][data-kind="${kind}"]`);
}

/** The text of a file's Monaco model. */
export async function editorText(page: Page, path: string): Promise<string> {
  return page.evaluate((p) => {
    const model = (window as any).monaco?.editor.getModel((window as any).monaco.Uri.file('/' + p));
    return model ? model.getValue() : '';
  }, path);
}

/** Saves a picture of the page: into docs/images (for the README) when
 *  RIVET_UPDATE_SCREENSHOTS=1, otherwise into test-results, so a test run
 *  never changes tracked files. */
export async function screenshot(page: Page, name: string) {
  const update = process.env.RIVET_UPDATE_SCREENSHOTS === '1';
  const dir = update
    ? path.join(__dirname, '..', '..', 'docs', 'images')
    : path.join(__dirname, '..', 'test-results');
  await page.screenshot({ path: path.join(dir, name) });
}
