/** Start-up errors of the bastion backend (SPEC §5.6): the CLI prints them and exits. */
import { CodedError } from '../errors.ts';

export type BastionConfigErrorCode =
  | 'invalid_bastion' // --bastion is not HOST:PORT, or names one bastion twice
  | 'invalid_bastion_ca'; // --bastion-ca holds no readable PEM certificate

export class BastionConfigError extends CodedError<BastionConfigErrorCode> {}
