// pydantic parses UUIDs with the Rust `uuid` crate and puts that crate's error text into its message;
// clients see it, so Berth reproduces the same text. Returns null when the input is a valid UUID.
const GROUP_LENGTHS = [8, 4, 4, 4, 12];
const HEX = /^[0-9a-fA-F]$/;

export function uuidErrorText(input: string): string | null {
  let body = input;
  let offset = 0;
  let wrapped = false;
  if (body.startsWith('urn:uuid:')) {
    body = body.slice(9);
    offset = 9;
    wrapped = true;
  } else if (body.startsWith('{') && body.endsWith('}') && body.length >= 2) {
    body = body.slice(1, -1);
    offset = 1;
    wrapped = true;
  }
  const chars = [...body];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c !== '-' && !HEX.test(c)) {
      return `invalid character: expected an optional prefix of \`urn:uuid:\` followed by [0-9a-fA-F-], found \`${c}\` at ${i + 1 + offset}`;
    }
  }
  const groups = body.split('-');
  if (groups.length === 1 && !wrapped) {
    return body.length === 32 ? null : `invalid length: expected length 32 for simple format, found ${body.length}`;
  }
  if (groups.length !== 5) return `invalid group count: expected 5, found ${groups.length}`;
  for (let g = 0; g < 5; g++) {
    if (groups[g]!.length !== GROUP_LENGTHS[g]) {
      return `invalid group length in group ${g}: expected ${GROUP_LENGTHS[g]}, found ${groups[g]!.length}`;
    }
  }
  return null;
}

/** The canonical lower-case hyphenated form of a valid UUID in any accepted spelling. */
export function canonicalUuid(input: string): string {
  const hex = input.replace(/^urn:uuid:|[{}-]/g, '').toLowerCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
