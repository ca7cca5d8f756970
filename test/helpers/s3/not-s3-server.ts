// Endpoints that are not S3, for the "Invalid endpoint" cases.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface NotS3Server {
  endpoint: string;
  /** Requests seen, so a test can tell that the client really talked to this server. */
  readonly requestCount: number;
  stop(): Promise<void>;
}

const PAGE = '<!DOCTYPE html>\n<html><head><title>Welcome</title></head><body><h1>It works!</h1><p>Hello</body></html>\n';

/** A web server that answers every request with 200 and an HTML page, like a web site's front page would. */
export async function startNotS3Server(): Promise<NotS3Server> {
  let requestCount = 0;
  const server = http.createServer((req, res) => {
    requestCount += 1;
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(PAGE) });
      res.end(req.method === 'HEAD' ? undefined : PAGE);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    get requestCount() {
      return requestCount;
    },
    stop: () => closeServer(server),
  };
}

/** An endpoint on a loopback port nothing listens on (it was free a moment ago): connections are refused. */
export async function closedPortEndpoint(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await closeServer(server);
  return `http://127.0.0.1:${port}`;
}

export function closeServer(server: http.Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
}
