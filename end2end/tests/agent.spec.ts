import { expect, test, type Page } from './fixtures';
import { newProject, send } from './helpers';

// The scripted provider answers "... todo app with the agent" with
// tests/fixtures/transcripts/agent-todo.json (its `match` words are "agent
// todo"): two write_file calls, then `node server.js`, then a summary.

function preview(page: Page) {
  return page.frameLocator('[data-testid="preview-frame"]');
}

test('in Agent mode the todo app is built step by step, each change approved', async ({ page }) => {
  await newProject(page);
  const modes = page.getByTestId('mode-switch');
  await modes.getByText('Agent').click();
  await expect(modes).toHaveAttribute('data-mode', 'agent');

  await send(page, 'build a todo app with the agent');
  const answer = page.getByTestId('message-assistant');
  const steps = answer.getByTestId('agent-step');

  // The first write waits for the person, showing its diff.
  const first = steps.nth(0);
  await expect(first).toHaveAttribute('data-status', 'waiting');
  await expect(first).toHaveAttribute('data-tool', 'write_file');
  await expect(first.getByTestId('agent-diff')).toContainText('+<h1>Todos</h1>');
  // Monaco's diff editor shows the whole file against what was there (nothing).
  const editor = first.getByTestId('agent-diff-editor');
  await expect(editor.locator('.monaco-diff-editor')).toBeVisible();
  await expect(editor).toContainText('Todos');
  await expect(page.locator('[data-testid="file-entry"][data-path="index.html"]')).toHaveCount(0);
  await first.getByTestId('approve-step').click();
  await expect(first).toHaveAttribute('data-status', 'done');
  // The file the tool wrote is in the tree.
  await expect(page.locator('[data-testid="file-entry"][data-path="index.html"]')).toBeVisible();

  // The server file, then the command: each waits, and is approved.
  for (const [i, tool] of [[1, 'write_file'], [2, 'run_shell_command']] as const) {
    const step = steps.nth(i);
    await expect(step).toHaveAttribute('data-status', 'waiting');
    await expect(step).toHaveAttribute('data-tool', tool);
    await step.getByTestId('approve-step').click();
  }
  await expect(steps.nth(2).getByTestId('agent-diff')).toContainText('$ node server.js');

  // The run ends plainly, with what it used.
  await expect(answer.getByTestId('agent-end')).toHaveText('Done.');
  await expect(answer.getByTestId('agent-usage')).toContainText('step 3 of');
  await expect(answer.getByTestId('agent-usage')).toContainText('tokens');
  await expect(answer).toHaveAttribute('data-status', 'complete');
  await expect(steps).toHaveCount(3);
  await expect(answer).toContainText('it is in the preview');

  // The command is in the terminal's Rivet tab, and the app in the preview.
  await expect(page.getByTestId('terminal-rivet')).toContainText('node server.js');
  await expect(preview(page).getByRole('heading', { name: 'Todos' })).toBeVisible();

  // A reload keeps the mode and the steps.
  await page.reload();
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  await expect(page.getByTestId('mode-switch')).toHaveAttribute('data-mode', 'agent');
  await expect(page.getByTestId('agent-step')).toHaveCount(3);
});

test('a denied step does not run and the run goes on', async ({ page }) => {
  await newProject(page);
  await page.getByTestId('mode-switch').getByText('Agent').click();
  await expect(page.getByTestId('mode-switch')).toHaveAttribute('data-mode', 'agent');
  await send(page, 'build a todo app with the agent');
  const first = page.getByTestId('agent-step').nth(0);
  await expect(first).toHaveAttribute('data-status', 'waiting');
  await first.getByTestId('deny-step').click();
  await expect(first).toHaveAttribute('data-status', 'denied');
  await expect(page.locator('[data-testid="file-entry"][data-path="index.html"]')).toHaveCount(0);
  // Stop ends the run while the next step waits.
  await expect(page.getByTestId('agent-step').nth(1)).toHaveAttribute('data-status', 'waiting');
  await page.getByTestId('chat-stop').click();
  await expect(page.getByTestId('agent-end')).toHaveText('Stopped by the user.');
  await expect(page.getByTestId('agent-step').nth(1)).toHaveAttribute('data-status', 'not_run');
});
