import type { HttpRequest, HttpResponse } from './uws.js';

/**
 * The client's address for login throttling. Behind a load balancer every socket comes from the balancer, so
 * with TRUST_PROXY=1 the address the (one, trusted) proxy appended last to X-Forwarded-For is used instead.
 * Call synchronously in the route handler: uWS's request object dies when the handler returns.
 */
export function clientIp(res: HttpResponse, req: HttpRequest, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = req.getHeader('x-forwarded-for');
    const last = forwarded.split(',').pop()?.trim();
    if (last) return last;
  }
  return Buffer.from(res.getRemoteAddressAsText()).toString();
}
