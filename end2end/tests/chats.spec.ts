import { expect, test } from './fixtures';
import { newProject, send } from './helpers';

// Two chats on one project: each shows its own messages, a new one starts
// from a note about the project, and both are there after a reload.
test('a second chat starts from a note about the project and keeps its messages apart', async ({ page }) => {
  await newProject(page);
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  const tabs = page.getByTestId('chat-tab');
  await expect(tabs).toHaveCount(1);
  await expect(tabs.first()).toHaveAttribute('aria-selected', 'true');

  await send(page, 'hello greeting');
  const answers = page.getByTestId('message-assistant');
  await expect(answers.last()).toHaveAttribute('data-status', 'complete');
  await expect(answers.last()).toContainText('Hello!');

  await page.getByTestId('chat-new').click();
  await expect(tabs).toHaveCount(2);
  const second = page.locator('[data-testid="chat-tab"][data-chat="c2"]');
  await expect(second).toHaveAttribute('aria-selected', 'true');
  await expect(page.getByTestId('chat-opening')).toBeVisible();
  await expect(page.getByTestId('chat-opening')).toContainText('- hello greeting');
  await expect(answers).toHaveCount(0);

  await send(page, 'show me a snippet sample');
  await expect(answers).toHaveCount(1);
  await expect(answers.last()).toHaveAttribute('data-status', 'complete');
  await expect(answers.last()).toContainText('counter component');

  const first = page.locator('[data-testid="chat-tab"][data-chat="main"]');
  await first.click();
  await expect(answers).toHaveCount(1);
  await expect(answers.last()).toContainText('Hello!');

  await page.reload();
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  await expect(tabs).toHaveCount(2);
  await second.click();
  await expect(answers).toHaveCount(1);
  await expect(answers.last()).toContainText('counter component');
});
