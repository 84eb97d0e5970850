import { expect, test } from './fixtures';
import { actions, newProject, send } from './helpers';

test('the data panel lists the tables a migration made, opens one and runs a query', async ({ page }) => {
  await newProject(page);
  await send(page, 'keep the todos in the database');
  const supabase = actions(page, 'supabase');
  await expect(supabase).toHaveCount(2);
  for (const action of await supabase.all()) {
    await expect(action).toHaveAttribute('data-status', 'complete', { timeout: 60_000 });
  }
  // The query action's card shows its rows.
  const inCard = supabase.nth(1).getByTestId('query-result');
  await expect(inCard).toContainText('eggs');
  await expect(inCard.getByTestId('query-count')).toHaveText('3 rows');

  await page.getByTestId('data-tab').click();
  const panel = page.getByTestId('data-panel');
  await expect(panel).toBeVisible();
  const table = panel.getByTestId('data-table');
  await expect(table).toHaveCount(1);
  await expect(table).toContainText('todos');
  await expect(table.getByTestId('data-table-rows')).toHaveText('3');
  await table.click();
  await expect(panel.getByTestId('data-sql')).toHaveValue('select * from "todos" limit 100');
  await expect(panel.getByTestId('query-result')).toContainText('bread');

  await panel.getByTestId('data-sql').fill("insert into todos (title) values ('tea')");
  await panel.getByTestId('data-run').click();
  await expect(panel.getByTestId('query-count')).toHaveText('1 row affected');
  await expect(table.getByTestId('data-table-rows')).toHaveText('4');

  await panel.getByTestId('data-sql').fill('select * from nowhere');
  await panel.getByTestId('data-run').click();
  await expect(panel.getByTestId('data-error')).toContainText('relation "nowhere" does not exist');

  // The terminals are a click away, as they were.
  await page.getByTestId('terminal-tab').first().click();
  await expect(panel).toBeHidden();
  await expect(page.getByTestId('terminal-rivet')).toBeVisible();
});

test('a Node server reads and writes the project database through the preview', async ({ page }) => {
  await newProject(page);
  await send(page, 'serve the stored todos');
  const app = page.frameLocator('[data-testid="preview-frame"]');
  await expect(app.getByRole('heading', { name: 'Stored todos' })).toBeVisible({ timeout: 180_000 });
  await expect(app.getByRole('listitem')).toHaveText(['milk', 'bread']);
  await app.getByLabel('New todo').fill('tea');
  await app.getByRole('button', { name: 'Add' }).click();
  await expect(app.getByRole('listitem')).toHaveText(['milk', 'bread', 'tea']);
  // The row the app wrote is in the database the data panel shows.
  await page.getByTestId('data-tab').click();
  await expect(page.getByTestId('data-table-rows')).toHaveText('3');
});
