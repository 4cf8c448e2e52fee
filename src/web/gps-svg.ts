import { html, type Html } from './html.js';

export interface GpsPoint { lat: number; lng: number }

const WIDTH = 600;
const HEIGHT = 360;
const PAD = 16;
// A browser draws a few thousand vertices instantly; more only adds bytes to the page.
const MAX_VERTICES = 2000;
// A device standing still still gets a visible (tiny) box instead of a division by zero.
const MIN_SPAN_DEG = 1e-5;

/** Every n-th point, always keeping the last (the current position). */
function thin(points: readonly GpsPoint[]): GpsPoint[] {
  if (points.length <= MAX_VERTICES) return [...points];
  const step = Math.ceil(points.length / MAX_VERTICES);
  const out = points.filter((_, i) => i % step === 0);
  if (out[out.length - 1] !== points[points.length - 1]) out.push(points[points.length - 1]);
  return out;
}

/**
 * A track as SVG, scaled to its bounding box: an equirectangular projection with longitudes shrunk by
 * cos(latitude), which keeps shapes true at the scale of one device's day. Start and end get markers.
 */
export function gpsSvg(track: readonly GpsPoint[]): Html {
  if (track.length === 0) return html`<p class="muted">No GPS points in this range.</p>`;
  const pts = thin(track);
  const midLat = (Math.min(...pts.map((p) => p.lat)) + Math.max(...pts.map((p) => p.lat))) / 2;
  const k = Math.cos((midLat * Math.PI) / 180);
  const xs = pts.map((p) => p.lng * k);
  const ys = pts.map((p) => -p.lat);
  const minX = Math.min(...xs);
  const minY = Math.min(...ys);
  const spanX = Math.max(...xs) - minX;
  const spanY = Math.max(...ys) - minY;
  const scale = Math.min((WIDTH - 2 * PAD) / Math.max(spanX, MIN_SPAN_DEG), (HEIGHT - 2 * PAD) / Math.max(spanY, MIN_SPAN_DEG));
  // Centre the track in the box along the axis it does not fill.
  const offX = (WIDTH - spanX * scale) / 2;
  const offY = (HEIGHT - spanY * scale) / 2;
  const xy = pts.map((_, i) => [(xs[i] - minX) * scale + offX, (ys[i] - minY) * scale + offY].map((v) => v.toFixed(1)));
  const [start, end] = [xy[0], xy[xy.length - 1]];
  return html`<svg id="gps-track" class="gps" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="GPS track of ${track.length} points">
<rect class="gps-bg" x="0" y="0" width="${WIDTH}" height="${HEIGHT}"></rect>
<polyline class="gps-line" points="${xy.map((p) => p.join(',')).join(' ')}"></polyline>
<circle class="gps-start" cx="${start[0]}" cy="${start[1]}" r="6"><title>start</title></circle>
<circle class="gps-end" cx="${end[0]}" cy="${end[1]}" r="6"><title>latest position</title></circle>
</svg>
<p class="muted">${track.length} points; green: start, red: latest position.</p>`;
}
