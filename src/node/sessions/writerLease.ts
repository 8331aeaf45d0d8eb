import { closeSync, openSync, readFileSync, statSync, unlinkSync, utimesSync, writeSync } from 'node:fs';

/**
 * One writer per index file. Each VS Code window has its own extension host, and the
 * index's lock (a directory SQLite's WebAssembly VFS creates) excludes readers as well
 * as writers, so two windows indexing at once would mostly wait on each other. The
 * first window takes the lease (a file created exclusively, holding its pid) and
 * indexes; the others read what it wrote. A lease whose holder died (its pid is gone)
 * or stopped refreshing it for `staleMs` is taken over.
 */
export class WriterLease {
  private held = false;
  /** Tells this holder from another in the same process (two index workers of one extension host). */
  private readonly token = `${process.pid}-${Math.random().toString(36).slice(2)}`;

  constructor(
    private readonly path: string,
    private readonly staleMs = 30_000,
  ) {}

  get isHeld(): boolean {
    return this.held;
  }

  /** Takes the lease if it is free or stale; true when this process holds it. */
  tryAcquire(nowMs = Date.now()): boolean {
    if (this.held) return true;
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(this.path, 'wx');
        writeSync(fd, JSON.stringify({ pid: process.pid, token: this.token, since: nowMs }));
        closeSync(fd);
        this.held = true;
        return true;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') return false;
        if (!this.isStale(nowMs)) return false;
        try {
          unlinkSync(this.path);
        } catch {
          // another window took it over first
        }
      }
    }
    return false;
  }

  private isStale(nowMs: number): boolean {
    try {
      if (nowMs - statSync(this.path).mtimeMs > this.staleMs) return true;
      const { pid } = JSON.parse(readFileSync(this.path, 'utf8')) as { pid?: unknown };
      if (typeof pid !== 'number') return true;
      process.kill(pid, 0);
      return false;
    } catch (e) {
      // ESRCH: no such process. EPERM: it exists (another user's): not stale.
      return (e as NodeJS.ErrnoException).code !== 'EPERM';
    }
  }

  /** Keeps the lease fresh (call every few seconds while holding it). */
  refresh(): void {
    if (!this.held) return;
    try {
      const now = new Date();
      utimesSync(this.path, now, now);
    } catch {
      this.held = false; // taken away (deleted): stop writing
    }
  }

  release(): void {
    if (!this.held) return;
    this.held = false;
    try {
      const { token } = JSON.parse(readFileSync(this.path, 'utf8')) as { token?: unknown };
      if (token === this.token) unlinkSync(this.path);
    } catch {
      // already gone
    }
  }
}
