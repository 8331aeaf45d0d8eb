// The session corpus of the benchmarks that need "every agent session on a machine"
// (bench:sessions, bench:team): real sessions copied under a fake home
// (test/fixtures: the spotter Claude Code session with its sub-agents, the M-Claude log, the
// user-rejections log, the Codex 0.114 rollout). Longer sessions are a real session
// continued: its lines written again with fresh message and tool ids and later timestamps,
// as a session that went on would write them. Every copy has message, request and tool call
// ids of its own (ownIds).
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../test/support/helpers';

const claude = join(repoRoot, 'test/fixtures/claude-code');
/** The spotter session's id: its lines are the template of the long sessions. */
export const SPOTTER = 'ae4a77f8-aedd-4bc1-888f-c94edc91af04';
/** The real sessions the corpus is made of, as text. */
export const templates = {
  spotter: readFileSync(join(claude, `${SPOTTER}.jsonl`), 'utf8'),
  editLoop: readFileSync(join(claude, 'edit-retry-loop.jsonl'), 'utf8'),
  rejections: readFileSync(join(claude, 'user-rejections.jsonl'), 'utf8'),
  codex: readFileSync(join(repoRoot, 'test/fixtures/codex/tracelab-agents-md-0.114.jsonl'), 'utf8'),
};
/** The spotter session's sub-agent logs, by file name. */
const spotterSubagents = readdirSync(join(claude, SPOTTER, 'subagents')).map((name) => ({
  name,
  text: readFileSync(join(claude, SPOTTER, 'subagents', name), 'utf8'),
}));

/** A deterministic generator (the corpus is the same in every run). */
let seed = 7;
const random = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;

/** Session i's id. */
export const uuid = (i: number): string => `b0000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

/**
 * A real session's message, request and tool call ids made its copy's own (`msg_s12_…`): every session an agent writes
 * has ids of its own, and the export's redactor remembers the values it has scanned, so copies sharing their ids
 * would spare it work that a machine's real sessions never spare it.
 */
function ownIds(text: string, tag: string): string {
  return text
    .replaceAll('"id":"msg_', `"id":"msg_${tag}_`)
    .replaceAll('"requestId":"req_', `"requestId":"req_${tag}_`)
    .replaceAll('toolu_', `toolu_${tag}_`)
    .replaceAll('"call_id":"call_', `"call_id":"call_${tag}_`);
}

/** The text of a session continued `times` times: each round with its own ids and timestamps `round` days later. */
function continued(text: string, sessionId: string, newId: string, tag: string, times: number): Generator<string> {
  const base = ownIds(text.replaceAll(sessionId, newId), tag);
  return (function* () {
    for (let round = 0; round < times; round++) {
      if (round === 0) {
        yield base;
        continue;
      }
      yield base
        .replaceAll('"id":"msg_', `"id":"msg_r${round}_`)
        .replaceAll('"requestId":"req_', `"requestId":"req_r${round}_`)
        .replaceAll('toolu_', `toolu_r${round}_`)
        .replace(
          /"timestamp":"(\d{4}-\d\d-\d\d)T/g,
          (_, day: string) =>
            `"timestamp":"${new Date(Date.parse(day) + round * 3_600_000).toISOString().slice(0, 10)}T`,
        );
    }
  })();
}

/** A generated corpus: the fake home, every session file, their bytes, the largest long session. */
export interface Generated {
  home: string;
  files: string[];
  bytes: number;
  largest: string;
}

/** `sessions` sessions coming to `targetBytes` under a new fake home (the same corpus in every run). */
export function generate(SESSIONS: number, TARGET_BYTES: number): Generated {
  seed = 7;
  const home = mkdtempSync(join(tmpdir(), 'agent-trace-bench-home-'));
  const files: string[] = [];
  let bytes = 0;
  let largest = { path: '', size: 0 };
  // Mixture: a few small sessions (the rejections log, Codex rollouts), the rest long Claude Code
  // sessions of heavy-tailed length, scaled so the whole corpus comes to TARGET_BYTES.
  const kinds = Array.from({ length: SESSIONS }, (_, i) =>
    i % 10 === 0 ? 'codex' : i % 10 === 1 ? 'rejections' : i % 10 < 5 ? 'editLoop' : 'spotter',
  );
  const weights = kinds.map(() => Math.exp(1.1 * (random() + random() + random() - 1.5)));
  const scalable = kinds.map((k, i) => (k === 'spotter' || k === 'editLoop' ? weights[i]! : 0));
  const fixed = kinds.reduce(
    (n, k) => n + (k === 'codex' ? templates.codex.length : k === 'rejections' ? templates.rejections.length : 0),
    0,
  );
  const perWeight = (TARGET_BYTES - fixed) / scalable.reduce((a, b) => a + b, 0);
  const now = Date.now();
  for (let i = 0; i < SESSIONS; i++) {
    const kind = kinds[i]!;
    const id = uuid(i);
    // Sessions spread over the last 60 days (the index keeps saved parses for the last 3).
    const mtime = new Date(now - (i / SESSIONS) * 60 * 86_400_000);
    let path: string;
    if (kind === 'codex') {
      const day = mtime.toISOString().slice(0, 10).split('-');
      path = join(
        home,
        '.codex/sessions',
        day[0]!,
        day[1]!,
        day[2]!,
        `rollout-${mtime.toISOString().slice(0, 19).replace(/:/g, '-')}-${id}.jsonl`,
      );
      mkdirSync(join(path, '..'), { recursive: true });
      writeFileSync(path, ownIds(templates.codex.replaceAll('01a7c9e4-6d12-7b3a-9f42-8c6d5e1a0b73', id), `s${i}`));
    } else {
      const project = join(home, '.claude/projects', `-home-me-projects-app${i % 40}`);
      mkdirSync(project, { recursive: true });
      path = join(project, `${id}.jsonl`);
      const [text, sid] =
        kind === 'spotter'
          ? [templates.spotter, SPOTTER]
          : kind === 'editLoop'
            ? [templates.editLoop, 'e5821007-9ca0-4a36-afc0-94da583da0ea']
            : [templates.rejections, '55604662-cf2a-4331-851a-ec234028f8ca'];
      const times = kind === 'rejections' ? 1 : Math.max(1, Math.round((weights[i]! * perWeight) / text.length));
      writeFileSync(path, '');
      for (const part of continued(text, sid, id, `s${i}`, times)) appendFileSync(path, part);
      // Its sub-agents' logs, with the session's ids (a sub-agent names the tool call that started it).
      if (kind === 'spotter') {
        mkdirSync(join(project, id, 'subagents'), { recursive: true });
        for (const { name, text: log } of spotterSubagents)
          writeFileSync(join(project, id, 'subagents', name), ownIds(log.replaceAll(SPOTTER, id), `s${i}`));
      }
    }
    utimesSync(path, mtime, mtime);
    const size = statSync(path).size;
    bytes += size;
    if (size > largest.size && kind === 'spotter') largest = { path, size };
    files.push(path);
  }
  return { home, files, bytes, largest: largest.path };
}
