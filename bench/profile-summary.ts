// Where the service's time goes: top self-time functions of the .cpuprofile files that
// `node --cpu-prof` wrote (one per thread: the main thread and each ingest worker).
import fs from 'node:fs';
import path from 'node:path';

interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }
interface CpuProfile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }

export interface ProfileLine { fn: string; selfMs: number; share: number }
export interface ThreadProfile { file: string; totalMs: number; idleMs: number; top: ProfileLine[] }

function label(n: ProfileNode): string {
  const { functionName, url, lineNumber } = n.callFrame;
  const where = url ? `${url.replace(/^file:\/\//, '').replace(/^.*\/(node_modules|dist)\//, '$1/')}:${lineNumber + 1}` : '';
  return `${functionName || '(anonymous)'}${where ? ` ${where}` : ''}`;
}

// Idle time: V8's own idle marker, and piscina's worker blocking on Atomics.wait for its next task.
const isIdle = (fn: string) => fn.startsWith('(idle)') || fn.startsWith('atomicsWaitLoop ');

export function summariseProfile(file: string, topN = 15): ThreadProfile {
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const dt = (p.timeDeltas[i] ?? 0) / 1000;
    const node = byId.get(p.samples[i]);
    if (!node) continue;
    const key = label(node);
    self.set(key, (self.get(key) ?? 0) + dt);
    total += dt;
  }
  const idleMs = [...self].filter(([k]) => isIdle(k)).reduce((a, [, v]) => a + v, 0);
  const busy = total - idleMs;
  const top = [...self]
    .filter(([k]) => !isIdle(k))
    .sort((a, b) => b[1] - a[1])
    .slice(0, topN)
    .map(([fn, selfMs]) => ({ fn, selfMs, share: busy > 0 ? selfMs / busy : 0 }));
  return { file: path.basename(file), totalMs: total, idleMs, top };
}

export function summariseProfileDir(dir: string, topN = 15): ThreadProfile[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).sort()
    .map((f) => summariseProfile(path.join(dir, f), topN));
}

export function formatProfiles(profiles: ThreadProfile[]): string {
  return profiles.map((t) => {
    const busy = t.totalMs - t.idleMs;
    const lines = t.top.map((l) => `    ${(l.share * 100).toFixed(1).padStart(5)}%  ${l.selfMs.toFixed(0).padStart(7)} ms  ${l.fn}`);
    return `  ${t.file}: ${busy.toFixed(0)} ms busy of ${t.totalMs.toFixed(0)} ms sampled\n${lines.join('\n')}`;
  }).join('\n');
}
