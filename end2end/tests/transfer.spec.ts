import { expect, test } from './fixtures';
import { TOKEN, newProject, openIde } from './helpers';

test('a project exported as a zip imports into a new project with the same files', async ({ page }) => {
  const id = await newProject(page);
  const auth = { authorization: `Bearer ${TOKEN}` };
  const put = await page.request.put(`/api/v1/projects/${id}/files/src/hello.txt`, {
    headers: auth,
    data: 'hello from the export',
  });
  expect(put.status()).toBe(204);

  // Export from the top bar's menu.
  await page.getByTestId('export-menu').click();
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByTestId('export-zip').click(),
  ]);
  expect(download.suggestedFilename()).toMatch(/\.zip$/);
  const zipPath = test.info().outputPath('export.zip');
  await download.saveAs(zipPath);
  await expect(page.getByTestId('export-json')).toHaveAttribute(
    'href',
    `/api/v1/projects/${id}/conversation.json`,
  );

  // Import it as a new project: the page opens it.
  await openIde(page, '/import');
  await page.getByTestId('import-zip').setInputFiles(zipPath);
  await page.getByTestId('import-submit').click();
  await page.waitForURL((url) => url.pathname.startsWith('/p/') && !url.pathname.endsWith(id));
  const copy = new URL(page.url()).pathname.split('/').pop()!;
  await expect(page.locator('[data-testid="file-entry"][data-path="src/hello.txt"]')).toBeVisible();
  const read = await page.request.get(`/api/v1/projects/${copy}/files/src/hello.txt`, { headers: auth });
  expect(await read.text()).toBe('hello from the export');
});

test('a refused git URL is reported on the import page', async ({ page }) => {
  await openIde(page, '/import');
  await page.getByTestId('import-git-url').fill('file:///etc');
  await page.getByTestId('import-submit').click();
  await expect(page.getByTestId('import-error')).toContainText('refused');
  expect(new URL(page.url()).pathname).toBe('/import');
});
