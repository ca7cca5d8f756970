// Child process: the official JS server (@langchain/langgraph-api 2.0.0, in-memory) with the benchmark
// graph and 10 workers, as `langgraphjs dev -n 10` starts it. Prints "READY <url>" once it listens.
import { fileURLToPath } from 'node:url';
import { startServer } from '@langchain/langgraph-api/server';

const [port, cwd] = process.argv.slice(2);
const graph = fileURLToPath(new URL('./graph.ts', import.meta.url));
const { host } = await startServer({ port: Number(port), nWorkers: 10, host: '127.0.0.1', cwd: cwd!, graphs: { agent: `${graph}:graph` } } as any);
process.stdout.write(`READY ${host.startsWith('http') ? host : `http://${host}`}\n`);
