import net from 'node:net';

/**
 * uWS listens with SO_REUSEPORT, so a second instance on a busy port would start and silently take part of
 * the traffic into its own database. Binding the port exclusively first turns that into a clear error.
 */
export function assertPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => reject(err.code === 'EADDRINUSE'
      ? new Error(`PORT ${port} on ${host} is already in use (another instance?); stop it or set PORT to a free port.`)
      : err));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}
