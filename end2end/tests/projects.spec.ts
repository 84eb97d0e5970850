import { expect, test, type Page } from './fixtures';
import { TOKEN, openIde, newProject } from './helpers';

/** Makes a project with `name` through the HTTP API; its id. */
async function createProject(page: Page, name: string): Promise<string> {
  const response = await page.request.post('/api/v1/projects', {
    headers: { authorization: `Bearer ${TOKEN}` },
    data: { name },
  });
  expect(response.status()).toBe(201);
  return (await response.json()).id;
}

/** A name no other test uses. */
function unique(label: string): string {
  return `${label} ${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
}

function item(page: Page, id: string) {
  return page.locator(`[data-testid="project-item"][data-project="${id}"]`);
}

test('the projects page lists projects, the latest changed first, and opens one', async ({ page }) => {
  const older = await createProject(page, unique('Older'));
  const newer = await createProject(page, unique('Newer'));
  // Times are kept to the second; a second later, a message makes `older`
  // the latest changed.
  await page.waitForTimeout(1_100);
  const sent = await page.request.post(`/api/v1/projects/${older}/messages`, {
    headers: { authorization: `Bearer ${TOKEN}` },
    data: { text: 'show me a snippet sample' },
  });
  // Acknowledged means stored: the list read next sees the change.
  expect(sent.ok()).toBe(true);
  await openIde(page, '/');
  const list = page.getByTestId('project-list');
  await expect(list).toBeVisible();
  await expect(item(page, older)).toBeVisible();
  await expect(item(page, newer)).toBeVisible();
  const ids = await page.getByTestId('project-item').evaluateAll((items) =>
    items.map((i) => i.getAttribute('data-project')),
  );
  expect(ids.indexOf(older)).toBeLessThan(ids.indexOf(newer));
  await expect(item(page, older).locator('time')).toHaveText(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/);

  await item(page, newer).getByRole('link').click();
  await expect(page).toHaveURL(new RegExp(`/p/${newer}$`));
  await expect(page.getByTestId('chat-input')).toBeVisible();
  // And back from the IDE's header.
  await page.getByTestId('projects-link').click();
  await expect(page.getByTestId('project-list')).toBeVisible();
});

test('search finds projects by name and by message text', async ({ page }) => {
  const byName = unique('Zebra stripes');
  const named = await createProject(page, byName);
  const other = await createProject(page, unique('Plain'));
  await page.request.post(`/api/v1/projects/${other}/messages`, {
    headers: { authorization: `Bearer ${TOKEN}` },
    data: { text: 'show me a snippet sample about quokkas' },
  });
  await openIde(page, '/');
  const search = page.getByTestId('project-search');

  await search.fill('zebra STRIPES');
  await expect(item(page, named)).toBeVisible();
  await expect(item(page, other)).toHaveCount(0);

  await search.fill('quokkas');
  await expect(item(page, other)).toBeVisible();
  await expect(item(page, named)).toHaveCount(0);

  await search.fill('');
  await expect(item(page, named)).toBeVisible();
  await expect(item(page, other)).toBeVisible();
});

test('a project is renamed in place and keeps its new name', async ({ page }) => {
  const id = await createProject(page, unique('Before'));
  const after = unique('After');
  await openIde(page, '/');
  await item(page, id).getByTestId('project-rename').click();
  const input = item(page, id).getByTestId('project-rename-input');
  await input.fill(after);
  await input.press('Enter');
  await expect(item(page, id).getByRole('link')).toHaveText(after);
  await page.reload();
  await expect(item(page, id).getByRole('link')).toHaveText(after);
});

test('delete asks first, then removes the project', async ({ page }) => {
  const id = await createProject(page, unique('Doomed'));
  await openIde(page, '/');
  await item(page, id).getByTestId('project-delete').click();
  const confirm = item(page, id).getByTestId('project-delete-confirm');
  await expect(confirm).toBeVisible();
  // Nothing is deleted before the confirmation.
  const still = await page.request.get(`/api/v1/projects/${id}`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  expect(still.status()).toBe(200);

  await confirm.click();
  await expect(item(page, id)).toHaveCount(0);
  const gone = await page.request.get(`/api/v1/projects/${id}`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  expect(gone.status()).toBe(404);
  expect((await gone.json()).code).toBe('project_not_found');
});

test('"New project" opens a fresh project in the IDE', async ({ page }) => {
  await openIde(page, '/');
  await page.getByTestId('new-project').click();
  await expect(page).toHaveURL(/\/p\/[a-z0-9]+$/);
  await expect(page.getByTestId('chat-input')).toBeVisible();
  // A project made from the IDE is listed too.
  const id = await newProject(page);
  await openIde(page, '/');
  await expect(item(page, id)).toBeVisible();
});

test('"New project" from a template opens its files at once, with no message', async ({ page }) => {
  await openIde(page, '/');
  await page.getByTestId('new-project-template').selectOption({ label: 'Vite + React + TypeScript' });
  await page.getByTestId('new-project').click();
  await expect(page).toHaveURL(/\/p\/[a-z0-9]+$/);
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  const file = (path: string) => page.locator(`[data-testid="file-entry"][data-path="${path}"]`);
  await expect(file('package.json')).toBeVisible();
  await expect(file('src/App.tsx')).toBeVisible();
  await expect(page.getByTestId('message-user')).toHaveCount(0);
  await expect(page.getByTestId('message-assistant')).toHaveCount(0);
  // The project is named after its template.
  const id = new URL(page.url()).pathname.split('/').pop()!;
  const project = await page.request.get(`/api/v1/projects/${id}`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  expect((await project.json()).name).toBe('Vite + React + TypeScript');
});
