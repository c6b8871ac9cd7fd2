import { appendFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

/**
 * Preloaded with `--import` into a process under test: appends the URL of every module the
 * process loads (static and dynamic imports alike) to the file LOADED_MODULES_FILE names, so
 * a test can tell what a real run loaded.
 */
const file = process.env.LOADED_MODULES_FILE;
if (file) {
  registerHooks({
    load(url, context, nextLoad) {
      appendFileSync(file, `${url}\n`);
      return nextLoad(url, context);
    },
  });
}
