// The test S3 server in its own process for bench/export.ts, so the objects it keeps in memory do not count
// towards the exporting process's RSS. Prints the endpoint as one JSON line.
import { ALL_S3_PERMISSIONS, startTestS3 } from '../test/helpers/s3/index.ts';

const s3 = await startTestS3({
  buckets: ['bench'],
  keys: [{ accessKeyId: 'AKIABENCH00000000001', secretAccessKey: 'bench-secret', allow: new Set(ALL_S3_PERMISSIONS) }],
});
const listing = async () => (await s3.listObjects('bench')).reduce((sum, object) => sum + object.size, 0);
process.stdout.write(`${JSON.stringify({ endpoint: s3.endpoint })}\n`);
process.stdin.on('data', async () => {
  process.stdout.write(`${JSON.stringify({ bytes: await listing() })}\n`);
});
process.stdin.on('end', () => void s3.stop().then(() => process.exit(0)));
