import { expect, test } from './fixtures';
import { newProject, queueFaults } from './helpers';

// The scripted provider answers a draft's rewrite with
// tests/fixtures/transcripts/enhance-draft.txt.
test('Enhance streams a clearer request into the box, and Undo gives the draft back', async ({ page }) => {
  await newProject(page);
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  const input = page.getByTestId('chat-input');
  const enhance = page.getByTestId('composer-enhance');
  await expect(enhance).toBeDisabled();
  await input.fill('todo app pls');
  // Slow chunks, so the rewrite is seen arriving.
  await queueFaults({ when: 'Rewrite this draft request', 'chunk-size': 12, 'chunk-delay-ms': 120 });
  await enhance.click();
  await expect(enhance).toHaveText('Enhancing…');
  await expect(input).toHaveValue(/^Build a todo app/);
  expect(await input.inputValue()).not.toContain('survive a reload.');
  await expect(input).toHaveValue(/survive a reload\.$/, { timeout: 20_000 });
  await expect(enhance).toHaveText('Enhance');

  await page.getByTestId('composer-enhance-undo').click();
  await expect(input).toHaveValue('todo app pls');
  await expect(page.getByTestId('composer-enhance-undo')).toHaveCount(0);
});
