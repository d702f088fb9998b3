/** Rows both `serve` commands share: the config file and the log level. */
import { choice, text } from './option-table.ts';

/** pino's levels. */
export const LOG_LEVELS = ['silent', 'fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;

export const configOption = () =>
  text('--config <file>', 'optional JSON/YAML file of settings (flag names as keys); flags and variables win over it', 'essentials', {
    inConfigFile: false,
  });

export const logLevelOption = () =>
  choice('--log-level <level>', 'how much goes to stderr (info: one JSON line per request)', 'essentials', LOG_LEVELS, 'info');
