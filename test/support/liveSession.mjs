// A real Claude Code session replayed now, for the live tests: its lines are written as
// they were (test/fixtures/claude-code/edit-retry-loop.jsonl, the M-Claude log), only their
// "timestamp" fields moved so the last line written is "just now", and later lines can be
// appended one at a time as a running agent would. Nothing else in a line changes.
// (No import.meta here: the extension-host tests bundle this file as CommonJS.)
import fs from 'node:fs';
import path from 'node:path';

const TIMESTAMP = /"timestamp":"([^"]+)"/;

/** Moves a line's timestamp by `shiftMs` (lines without one stay as they are). */
function shifted(line, shiftMs) {
  const m = TIMESTAMP.exec(line);
  if (!m) return line;
  const t = Date.parse(m[1]);
  if (Number.isNaN(t)) return line;
  return line.replace(TIMESTAMP, `"timestamp":"${new Date(t + shiftMs).toISOString()}"`);
}

function timeOf(line) {
  const m = TIMESTAMP.exec(line);
  return m ? Date.parse(m[1]) : NaN;
}

/**
 * Starts a live session at `file` with the first `lines` lines of `source` (a real log), timed
 * so the last of them happened `agoMs` ago. Returns `append(n)`, which writes the next n lines
 * as if they happened now, and how many lines are written.
 */
export function startLiveSession(source, file, lines, agoMs = 5_000) {
  const all = fs.readFileSync(source, 'utf8').split('\n').filter((l) => l.trim() !== '');
  let written = Math.min(lines, all.length);
  let lastTime = NaN;
  for (let i = written - 1; i >= 0 && Number.isNaN(lastTime); i--) lastTime = timeOf(all[i]);
  const shift = Date.now() - agoMs - lastTime;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, all.slice(0, written).map((l) => shifted(l, shift)).join('\n') + '\n');
  return {
    total: all.length,
    get written() {
      return written;
    },
    /** Appends the next `n` lines, their times moved so the last of them is now. */
    append(n) {
      const next = all.slice(written, written + n);
      if (next.length === 0) return 0;
      let last = NaN;
      for (let i = next.length - 1; i >= 0 && Number.isNaN(last); i--) last = timeOf(next[i]);
      const s = Number.isNaN(last) ? shift : Date.now() - last;
      fs.appendFileSync(file, next.map((l) => shifted(l, s)).join('\n') + '\n');
      written += next.length;
      return next.length;
    },
  };
}
