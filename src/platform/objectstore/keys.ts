// Object keys under a destination. Users type prefixes like "/exports/", "exports//2024" or "";
// S3 keeps every slash literally, so a stray one would create an empty-named folder.

export interface DestinationLocation {
  bucket: string;
  prefix: string;
  /** Legacy layout and stores that need it: the bucket name is the first folder of every key. */
  includeBucketInPrefix?: boolean;
}

/** Joins key parts with single slashes: no leading, trailing or doubled slashes. */
export function joinKey(...parts: string[]): string {
  return parts
    .flatMap((part) => part.split('/'))
    .filter((segment) => segment.length > 0)
    .join('/');
}

/** The key prefix everything of this destination is written under ('' when there is none). */
export function destinationRoot(location: DestinationLocation): string {
  return location.includeBucketInPrefix ? joinKey(location.bucket, location.prefix) : joinKey(location.prefix);
}

export function destinationKey(location: DestinationLocation, ...parts: string[]): string {
  return joinKey(destinationRoot(location), ...parts);
}
