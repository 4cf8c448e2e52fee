// One PostgreSQL for the whole run: DATABASE_URL when set (CI uses the machine's server), else an
// embedded server in a temporary folder. Each test file then creates its own database on it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { openEmbeddedDatabase } from '../../src/store/embedded.js';

declare module 'vitest' {
  export interface ProvidedContext { adminDatabaseUrl: string }
}

let stop: (() => Promise<void>) | null = null;
let tmp: string | null = null;

export async function setup(project: TestProject) {
  let url = process.env.DATABASE_URL;
  if (!url) {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'telemetry-test-'));
    const port = 55000 + Math.floor(Math.random() * 5000);
    const db = await openEmbeddedDatabase(tmp, port);
    stop = db.stop;
    url = db.url;
  }
  project.provide('adminDatabaseUrl', url);
}

export async function teardown() {
  if (stop) await stop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
}
