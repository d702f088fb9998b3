/**
 * Loopback test servers: listen on an ephemeral port of 127.0.0.1, and close without waiting for
 * idle keep-alive connections.
 */
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo, Server } from 'node:net';

/** Listen on 127.0.0.1, port 0; the port the system gave. */
export async function listenLoopback(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Drop every open connection of `server` (keep-alive ones too) and close it. */
export async function closeServer(server: HttpServer): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => {
    server.close(() => {
      resolve();
    });
  });
}
