import { Option } from 'commander';
import { DEFAULT_CONFIG } from './cli-context.ts';
import { existingFile } from './option-parsers.ts';

/**
 * --config FILE, checked to exist when given. null: no default, for the commands that read
 * a configuration only when one is named.
 */
export function configOption(defaultPath: string | null = DEFAULT_CONFIG): Option {
  const option = new Option('-c, --config <FILE>', 'the gateway configuration (YAML)').argParser(
    existingFile,
  );
  return defaultPath === null ? option : option.default(defaultPath);
}
