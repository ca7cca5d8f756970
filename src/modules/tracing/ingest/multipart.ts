// A multipart/form-data reader for the SDK's /runs/multipart bodies (already decompressed and size-checked).
// The body is read whole: its size is bounded by the advertised batch limit, and a buffer scan with
// indexOf is several times faster than a streaming state machine for these many small parts.

export interface FormPart {
  name: string;
  contentType: string | undefined;
  data: Buffer;
}

export class MultipartError extends Error {}

/** The boundary parameter of a multipart/form-data content type. */
export function multipartBoundary(contentType: string | undefined): string | undefined {
  if (!contentType || !/^multipart\/form-data\s*(;|$)/i.test(contentType.trim())) return undefined;
  const match = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const boundary = match?.[1] ?? match?.[2];
  return boundary && boundary.length <= 200 ? boundary : undefined;
}

const HEADER_END = Buffer.from('\r\n\r\n');

export function parseMultipart(body: Buffer, boundary: string): FormPart[] {
  const delimiter = Buffer.from(`--${boundary}`);
  const nextDelimiter = Buffer.from(`\r\n--${boundary}`);
  const parts: FormPart[] = [];
  let position = body.indexOf(delimiter);
  if (position === -1) throw new MultipartError('multipart body has no boundary line');
  for (;;) {
    position += delimiter.length;
    // "--" after a delimiter closes the body.
    if (body[position] === 0x2d && body[position + 1] === 0x2d) return parts;
    if (body[position] === 0x0d && body[position + 1] === 0x0a) position += 2;
    else throw new MultipartError('malformed multipart boundary line');
    const headerEnd = body.indexOf(HEADER_END, position);
    const next = body.indexOf(nextDelimiter, position);
    if (next === -1) throw new MultipartError('multipart body ends before its closing boundary');
    let headerText: string;
    let dataStart: number;
    if (headerEnd === -1 || headerEnd > next) {
      // A part with headers only up to the boundary is malformed.
      throw new MultipartError('multipart part without a blank line after its headers');
    } else {
      headerText = body.toString('latin1', position, headerEnd);
      dataStart = headerEnd + 4;
    }
    const headers = parseHeaders(headerText);
    const disposition = headers.get('content-disposition');
    const name = disposition ? dispositionName(disposition) : undefined;
    if (name === undefined) throw new MultipartError('multipart part without Content-Disposition name');
    parts.push({ name, contentType: headers.get('content-type'), data: body.subarray(dataStart, next) });
    position = next + 2;
  }
}

function parseHeaders(text: string): Map<string, string> {
  const headers = new Map<string, string>();
  for (const line of text.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return headers;
}

function dispositionName(value: string): string | undefined {
  const match = /;\s*name="((?:[^"\\]|\\.)*)"/i.exec(value) ?? /;\s*name=([^;\s]+)/i.exec(value);
  if (!match) return undefined;
  // Header bytes were read as latin1; names are UTF-8 on the wire.
  return Buffer.from(match[1]!.replace(/\\(.)/g, '$1'), 'latin1').toString('utf8');
}
