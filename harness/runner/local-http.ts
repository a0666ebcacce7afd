import type { Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';

/** Listens on 127.0.0.1 at a free port (short keep-alive: a killed caller's socket goes soon); resolves with the base URL. */
export async function listenLocally(server: Server): Promise<string> {
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Closes the server and every connection it holds. */
export async function closeServer(server: Server | undefined): Promise<void> {
  if (!server) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/**
 * A port free on 127.0.0.1 now: the system's pick for a listener there, closed again, for a process the harness
 * starts with that --port (a port it chose itself, never a fixed one a user's own process may hold).
 */
export async function freeLoopbackPort(): Promise<number> {
  const probe = createTcpServer();
  await new Promise<void>((resolve, reject) => probe.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
