import WebSocket from 'ws';

export interface LiveClient {
  ws: WebSocket;
  messages: any[];
  /** Settles when the server closes the socket, with its close code and reason. */
  closed: Promise<{ code: number; reason: string }>;
}

// A client of /api/live that records every message it receives.
export function connectLive(url: string, headers: Record<string, string>): Promise<LiveClient> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    const messages: any[] = [];
    const closed = new Promise<{ code: number; reason: string }>((r) => ws.once('close', (code, reason) => r({ code, reason: String(reason) })));
    ws.on('message', (data) => messages.push(JSON.parse(String(data))));
    ws.once('open', () => resolve({ ws, messages, closed }));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`refused with ${res.statusCode}`)));
    ws.once('error', reject);
  });
}
