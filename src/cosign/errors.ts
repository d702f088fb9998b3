/**
 * Typed errors of the cosign role (SPEC §5). Codes are stable (snake_case):
 *
 * AddCheckpointRequestError (the request body does not parse; always 400):
 *   malformed_request
 * LogsConfigError (the known-logs file or a logs/v0 list is refused; start-up fails, a reload keeps
 * the previous copy):
 *   invalid_logs_config, invalid_log_list
 * CosignConfigError (bad arguments to the cosign role factory):
 *   invalid_cosign_key, invalid_name, invalid_evidence_limit
 */
import { ProtocolError } from '../errors.ts';

export class AddCheckpointRequestError extends ProtocolError {
  constructor(message: string) {
    super('malformed_request', message);
  }
}

export class LogsConfigError extends ProtocolError {}

export class CosignConfigError extends ProtocolError {}
