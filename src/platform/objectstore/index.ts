export { createS3Client, DEFAULT_S3_TUNING } from './client.ts';
export type { S3ClientTuning, S3Credentials, S3Destination } from './client.ts';
export { classifyS3Error, destinationErrorDetail, isDestinationError } from './errors.ts';
export type { DestinationErrorKind, S3ErrorClassification, S3ErrorKind } from './errors.ts';
export { destinationKey, destinationRoot, joinKey } from './keys.ts';
export type { DestinationLocation } from './keys.ts';
export { validateDestination } from './validate-destination.ts';
export type { DestinationValidation } from './validate-destination.ts';
