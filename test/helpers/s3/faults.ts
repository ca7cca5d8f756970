// Scripted failures for tests of retries and error classification: the next N requests that match a predicate fail.
import type { S3Permission } from './s3-request.ts';

/**
 * internal-error → 500 InternalError; slow-down → 503 SlowDown; reset → the TCP connection is reset (ECONNRESET);
 * stall → no answer at all until the client gives up (for timeout tests).
 */
export type FaultKind = 'internal-error' | 'slow-down' | 'reset' | 'stall';

export interface FaultTarget {
  method: string;
  bucket: string | undefined;
  key: string | undefined;
  permission: S3Permission;
  query: Readonly<Record<string, string | string[]>>;
}

export interface FaultSpec {
  kind: FaultKind;
  /** How many matching requests fail; default 1. */
  times?: number;
  /** Default: every request. */
  match?: (request: FaultTarget) => boolean;
}

export interface InjectedFault {
  /** Matching requests that have failed so far. */
  readonly hits: number;
  readonly remaining: number;
  cancel(): void;
}

interface ArmedFault {
  kind: FaultKind;
  match: (request: FaultTarget) => boolean;
  remaining: number;
  hits: number;
}

export class FaultBook {
  #faults: ArmedFault[] = [];

  add(spec: FaultSpec): InjectedFault {
    const fault: ArmedFault = { kind: spec.kind, match: spec.match ?? (() => true), remaining: spec.times ?? 1, hits: 0 };
    this.#faults.push(fault);
    return {
      get hits() {
        return fault.hits;
      },
      get remaining() {
        return fault.remaining;
      },
      cancel: () => {
        fault.remaining = 0;
      },
    };
  }

  /** The fault this request suffers, if any; faults fire in the order they were added. */
  take(request: FaultTarget): FaultKind | undefined {
    const fault = this.#faults.find((f) => f.remaining > 0 && f.match(request));
    if (!fault) return undefined;
    fault.remaining -= 1;
    fault.hits += 1;
    this.#faults = this.#faults.filter((f) => f.remaining > 0);
    return fault.kind;
  }

  clear(): void {
    this.#faults = [];
  }
}
