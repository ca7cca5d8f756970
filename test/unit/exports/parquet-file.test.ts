// ParquetFile against a recording stand-in for the S3 client: a file split into many parts, uploaded one part
// ahead of encoding, reassembles into a valid Parquet file holding every row in order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parquetReadObjects } from 'hyparquet';
import type { S3Client } from '@aws-sdk/client-s3';
import { ParquetFile } from '../../../src/modules/exports/parquet/parquet-file.ts';
import { columnPlan } from '../../../src/modules/exports/parquet/columns.ts';

function recordingClient() {
  const parts = new Map<number, Uint8Array>();
  const calls: string[] = [];
  let completedParts: { PartNumber?: number }[] = [];
  const client = {
    async send(command: { constructor: { name: string }; input: Record<string, any> }) {
      const name = command.constructor.name;
      calls.push(name);
      if (name === 'CreateMultipartUploadCommand') return { UploadId: 'upload-1' };
      if (name === 'UploadPartCommand') {
        // Let the next row groups encode while this part is "in flight".
        await new Promise((resolve) => setTimeout(resolve, 5));
        parts.set(command.input.PartNumber, command.input.Body);
        return { ETag: `"etag-${command.input.PartNumber}"` };
      }
      if (name === 'CompleteMultipartUploadCommand') {
        completedParts = command.input.MultipartUpload.Parts;
        return {};
      }
      return {};
    },
  };
  return {
    client: client as unknown as S3Client,
    calls,
    assembled: () => Buffer.concat(completedParts.map((part) => parts.get(part.PartNumber!)!)),
    completedParts: () => completedParts,
  };
}

test('a file of many parts reassembles into every row, in order', async () => {
  const s3 = recordingClient();
  let recorded: string | undefined;
  const file = await ParquetFile.open({
    client: s3.client, bucket: 'b', key: 'k.parquet', plan: columnPlan(['id', 'inputs', 'start_time'], 'v2_beta'),
    compression: 'none', partSizeBytes: 64 * 1024,
    onUploadStarted: async (uploadId) => {
      recorded = uploadId;
    },
  });
  assert.equal(recorded, 'upload-1');
  const rows = Array.from({ length: 3000 }, (_, i) => ({
    id: `run-${i}`, inputs: { text: `${i}:${'x'.repeat(200 + (i % 50))}` }, start_time: `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}.000001+00:00`,
  }));
  for (let start = 0; start < rows.length; start += 500) await file.writeRowGroup(rows.slice(start, start + 500));
  await file.close();
  assert.ok(s3.completedParts().length > 5, `many parts (${s3.completedParts().length})`);
  assert.deepEqual(s3.completedParts().map((part) => part.PartNumber), s3.completedParts().map((_, i) => i + 1));
  assert.equal(s3.calls.at(-1), 'CompleteMultipartUploadCommand');
  const bytes = s3.assembled();
  const read = await parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer });
  assert.equal(read.length, 3000);
  assert.deepEqual(read.map((row) => row.id), rows.map((row) => row.id));
  assert.deepEqual(read[7]!.inputs, rows[7]!.inputs);
});
