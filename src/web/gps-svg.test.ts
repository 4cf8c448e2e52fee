import { describe, expect, it } from 'vitest';
import { gpsSvg } from './gps-svg.js';

const vertices = (svg: string) => /<polyline class="gps-line" points="([^"]*)">/.exec(svg)![1].split(' ').map((p) => p.split(',').map(Number));

describe('gpsSvg', () => {
  it('scales a track to its bounding box inside the 600 x 360 view, north up, with start and end markers', () => {
    const svg = gpsSvg([{ lat: 0, lng: 0 }, { lat: 0.01, lng: 0 }, { lat: 0.01, lng: 0.01 }]).text;
    const [a, b, c] = vertices(svg);
    for (const [x, y] of [a, b, c]) {
      expect(x).toBeGreaterThanOrEqual(16);
      expect(x).toBeLessThanOrEqual(584);
      expect(y).toBeGreaterThanOrEqual(16);
      expect(y).toBeLessThanOrEqual(344);
    }
    expect(b[1]).toBeLessThan(a[1]); // north is up
    expect(b[0]).toBe(a[0]);
    expect(c[0]).toBeGreaterThan(b[0]); // east is right
    expect(Math.abs(c[0] - b[0])).toBeCloseTo(Math.abs(b[1] - a[1]), 0); // a square stays square near the equator
    expect(svg).toContain(`<circle class="gps-start" cx="${a[0].toFixed(1)}" cy="${a[1].toFixed(1)}"`);
    expect(svg).toContain(`<circle class="gps-end" cx="${c[0].toFixed(1)}" cy="${c[1].toFixed(1)}"`);
  });

  it('draws a device that never moved as one centred point instead of dividing by zero', () => {
    const [p, q] = vertices(gpsSvg([{ lat: 48.1, lng: 11.5 }, { lat: 48.1, lng: 11.5 }]).text);
    expect(p).toEqual([300, 180]);
    expect(q).toEqual([300, 180]);
  });

  it('thins a long track to at most 2,001 vertices and keeps the latest position', () => {
    const track = Array.from({ length: 10_001 }, (_, i) => ({ lat: i / 1e4, lng: 0 }));
    const svg = gpsSvg(track).text;
    const v = vertices(svg);
    expect(v.length).toBeLessThanOrEqual(2001);
    expect(v[v.length - 1][1]).toBe(16); // the northernmost point is the last one
    expect(svg).toContain('10001 points');
  });

  it('says so when there are no points', () => {
    expect(gpsSvg([]).text).toBe('<p class="muted">No GPS points in this range.</p>');
  });
});
