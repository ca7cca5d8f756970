export { EMULATOR_MAX_BODY_BYTES, startTestS3 } from './test-s3-server.ts';
export type { RecordedRequest, StartTestS3Options, StoredObject, TestS3 } from './test-s3-server.ts';
export { closedPortEndpoint, startNotS3Server } from './not-s3-server.ts';
export type { NotS3Server } from './not-s3-server.ts';
export { ALL_S3_PERMISSIONS } from './s3-request.ts';
export type { S3Permission } from './s3-request.ts';
export type { TestS3Key } from './sigv4-verifier.ts';
export type { FaultKind, FaultSpec, FaultTarget, InjectedFault } from './faults.ts';
