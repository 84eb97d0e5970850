import { expect, test } from './fixtures';
import fs from 'node:fs';
import path from 'node:path';
import { git, gitServer } from './git-server';
import { newProject, TOKEN } from './helpers';

// The settings' git remote against git's own smart-HTTP server: connect,
// push, see how far apart the two are, and pull someone else's commit into
// the project's files.
test('the settings connect a git remote, push, show ahead and behind, and pull', async ({ page }) => {
  // Both under the test's output directory, which the next run empties.
  const root = test.info().outputPath('git');
  fs.mkdirSync(root, { recursive: true });
  const remote = await gitServer(root);
  const project = await newProject(page);
  const written = await page.request.put(`/api/v1/projects/${project}/files/index.html`, {
    headers: { authorization: `Bearer ${TOKEN}` },
    data: '<h1>mine</h1>\n',
  });
  expect(written.status()).toBe(204);

  await page.getByTestId('settings-toggle').click();
  await page.getByTestId('git-url').fill(remote.url);
  await page.getByTestId('git-save').click();
  const status = page.getByTestId('git-status');
  await expect(status).toContainText('main: not on the remote yet');
  await page.getByTestId('git-push').click();
  await expect(page.getByTestId('git-result')).toContainText('Pushed');
  await expect(status).toContainText('main: 0 ahead, 0 behind');
  expect(git(path.join(root, 'app.git'), ['show', 'main:index.html'])).toBe('<h1>mine</h1>');

  // Someone else adds a file; Pull brings it into the project's files.
  const work = test.info().outputPath('clone');
  fs.mkdirSync(work, { recursive: true });
  git(work, ['clone', '-q', path.join(root, 'app.git'), 'clone']);
  const clone = path.join(work, 'clone');
  fs.writeFileSync(path.join(clone, 'README.md'), 'theirs\n');
  git(clone, ['add', 'README.md']);
  git(clone, ['commit', '-q', '-m', 'theirs']);
  git(clone, ['push', '-q', 'origin', 'HEAD:main']);
  await page.getByTestId('git-pull').click();
  await expect(page.getByTestId('git-result')).toContainText('Pulled main: fast-forwarded, 1 file changed');
  await expect(status).toContainText('main: 0 ahead, 0 behind');
  await page.getByTestId('settings-toggle').click();
  await expect(page.locator('[data-testid="file-entry"][data-path="README.md"]')).toBeVisible();
  remote.close();
});
