// Every command of the CLI but `analyze` and `convert`, and its usage: dist/cliCommands.js,
// loaded by the launcher (src/cli/main.ts) only for these commands.
import { FORMATS as SUPPORTED_FORMATS } from '../core/trace/formats';
import { SHARE_USAGE, runCompare, runExport, runRedact, runReport } from './share';
import { runSessions } from './sessions';
import { runSimulate } from './simulate';
import { runContext } from './context';
import { runWindows } from './windows';
import { runCalibrate } from './calibrate';
import { runCost } from './cost';
import { runCompact, runQuery, runTeamExport, runTeamReport, TEAM_USAGE } from './team';
import { runAnalyze } from './analyze';
import { VERSION } from './version';
import { withExitStatus } from './exitStatus';

const USAGE = `agent-trace ${VERSION}: where an agent's tokens go, from its trace.

Usage:
  agent-trace analyze FILE [--json] [--format ID] [--min-loop-attempts N] [--cache-ttl-min M]
                     [--prices PRICES.json] [--what-if-ttl-min M [--what-if-ttl-write X]]
                     [--budget USD] [--parse-threads N]
  agent-trace analyze DIR [--json] [--min-loop-attempts N] [--cache-ttl-min M]
  agent-trace sessions [--json] [--agent ID] [--since 7d] [--project P]
  agent-trace context FILE [--json] [--top N]
  agent-trace cost [FILE...] [--json] [--budget USD]
  agent-trace windows [FILE...] [--json] [--limit-5h L] [--limit-week L]
  agent-trace convert FILE -o OUT.trace.jsonl [--format ID] [--redact strict] [--no-redact]
  agent-trace simulate (FILE | --workload W.json) [options] [--json]
  agent-trace calibrate RESULTS [--max-batched-tokens N] [--json] [-o CAL.json]
${SHARE_USAGE}
${TEAM_USAGE}
  agent-trace --help | --version

Formats (detected automatically; --format overrides):
${SUPPORTED_FORMATS.map((f) => `  ${f.id.padEnd(12)} ${f.label}`).join('\n')}

analyze prints per session: LLM calls, user turns, token totals, cache hit rate,
raw input/output and appended/output ratios beside the published ranges for
agent workloads, prefill vs decode share of LLM time, tool calls by tool,
exploration vs execution by quarter, context growth and compactions, cache-miss
causes and retry loops of failing tool calls. --json prints the stable contract
of docs/reference/json-output.md. Given a folder, analyze reads every session in it
(*.jsonl, *.json, *.traj; sub-agent logs with their session) and prints their
combined fingerprint and how the figures spread across them. --min-loop-attempts
(default 3) is the fewest failed attempts that make a retry loop; --cache-ttl-min (default 5) the provider's
cache TTL an idle gap must exceed to explain a cache miss. --parse-threads N
(analyze and convert of one file) parses a Claude Code or Codex log on N worker
threads beside the one that reads it: the same figures; off by default, as on a
busy machine it costs more CPU than it saves (docs/performance.md).

report writes one self-contained HTML file (no network, strict CSP) with the
inspector's views of each trace: summary, timeline with hover and zoom,
fingerprint, retry loops, cache misses, call details, and the what-if scenario
and cliff of --whatif (the panel's Export JSON). Several FILEs, or --session IDs
with their sub-agents, go into one report.

redact writes a copy of the trace (and its sub-agent logs) in its own format with
secrets removed: API keys and tokens (secretlint's recommended rules), private
keys, passwords in URLs, authorization headers, .env-style assignments, e-mail
addresses and the user name in home-folder paths. Every token figure stays.
convert and export redact what they write the same way unless --no-redact; each
prints what it removed as kinds and counts, never values. Bare hex, UUIDs, long
numbers, short random tokens and user:password pairs (keys with no prefix or
name) are removed unless the trace explains them as ids (its id fields and file
names, commit hashes in git output...); --redact strict removes those ids too.

export writes the sessions (and their sub-agents) as a block-hash trace to replay
on a serving engine: mooncake (512-token hash_ids, open loop), aiperf (AIPerf's
mooncake_trace with session_id and per-turn delay: closed loop) or bailian
(16-token blocks, parent_chat_id). --replicas N copies every session, --stagger-s
S apart; equal prefixes get equal block ids, private content fresh ones.

compare reads a replay's results back (AIPerf's profile_export.jsonl, joined by
conversation and turn; or a vllm bench result, joined by order) and puts them
beside the trace and the simulator's prediction of the same scenario: TTFT per
call and overall, the server's prefix-cache hits where it recorded them. Give the
export's --to/--replicas/--stagger-s/--session, and --whatif for the what-if's
GPU, model and policy.

Cost: every call is priced on its own (its date, its long-context tier, its
service tier, 5-minute and 1-hour cache writes at their own rates) from
@pydantic/genai-prices and a small dated supplement; a model without a price is
"unknown", never $0. --prices PRICES.json adds or overrides prices
(docs/guide/cost.md). The cache TTL what-if replays each session under 5 minutes and 1 hour;
--what-if-ttl-min M adds a TTL of M minutes, priced at the 5-minute write rate
up to 5 min and the 1-hour rate above, or at X times the input price with
--what-if-ttl-write X.

export --to parquet writes this machine's sessions (or the traces named) as
Parquet tables of calls, tool calls and sessions for a team's engines (DuckDB,
ClickHouse, Spark, Trino); query runs DuckDB SQL over such a folder, or one of
the named team queries (agent-trace query --list). export --to otlp writes the
same sessions as OpenTelemetry GenAI spans (OTLP/JSON) to a file or POSTs them to
an OTLP/HTTP endpoint (Langfuse, Phoenix, a collector). team-report writes every
named query over such a folder into one HTML report; compact merges such a
folder's small files into a few large ones. docs/guide/team.md.

context prints what fills each call's input, by source, with its tokens and what
each part cost over every call that carried it, the largest contributors and
priced suggestions; agent-trace context --help.

sessions lists the agent sessions on this machine with their figures (the Agent
Sessions view's); agent-trace sessions --help lists its options.

windows rebuilds Claude's and Codex's 5-hour and weekly plan windows from the
calls' times: used, burn rate, time to a limit you set, each session's share
(agent-trace windows --help; docs/guide/windows.md).

simulate replays a traced agent session as N sessions sharing one GPU's vLLM
prefix cache and reports the hit rate, recomputed prefill, preemptions, prefill
share and slowdown, or sweeps N or the cache size to find the cliff. Its options:
agent-trace simulate --help.

calibrate fits simulate's step-time constants to an AIPerf or vllm bench run on your
own server, and simulate --calibration uses them (agent-trace calibrate --help).

--budget USD (analyze, cost) makes a trace that cost more than USD exit with 3,
saying by how much: for CI.

Exit status: 0 ok, 1 the file could not be read as a trace (simulate: or the
parameters cannot work), 2 usage error, 3 over the --budget.
`;

/** Every command but `analyze` and `convert` (and those too, when run from here): its exit status. */
export async function runCommand(argv: readonly string[]): Promise<number> {
  // simulate and sessions have their own options and help.
  if (argv[0] === 'simulate') return runSimulate(argv.slice(1));
  if (argv[0] === 'context') return runContext(argv.slice(1));
  if (argv[0] === 'sessions')
    return runSessions(
      argv.slice(1),
      (t) => process.stdout.write(t),
      (t) => process.stderr.write(t),
    );
  if (argv[0] === 'cost')
    return runCost(
      argv.slice(1),
      (t) => process.stdout.write(t),
      (t) => process.stderr.write(t),
    );
  if (argv[0] === 'windows')
    return runWindows(
      argv.slice(1),
      (t) => process.stdout.write(t),
      (t) => process.stderr.write(t),
    );
  if (argv[0] === 'calibrate')
    return runCalibrate(
      argv.slice(1),
      (t) => process.stdout.write(t),
      (t) => process.stderr.write(t),
    );
  if (argv[0] === 'redact' && !argv.includes('--help')) return runRedact(argv.slice(1));
  // The team tables have their own options (and --help); the replay exports share theirs.
  if (argv[0] === 'export' && ['parquet', 'otlp'].includes(argv[argv.indexOf('--to') + 1] ?? ''))
    return runTeamExport(argv.slice(1), `agent-trace ${VERSION}`, (t) => process.stderr.write(t));
  if (argv[0] === 'compact') return runCompact(argv.slice(1), (t) => process.stderr.write(t));
  if (argv[0] === 'team-report')
    return runTeamReport(argv.slice(1), `agent-trace ${VERSION}`, (t) => process.stderr.write(t));
  if (argv[0] === 'query')
    return runQuery(
      argv.slice(1),
      (t) => process.stdout.write(t),
      (t) => process.stderr.write(t),
    );
  if (argv[0] === 'export' && !argv.includes('--help')) return runExport(argv.slice(1));
  if (argv[0] === 'compare' && !argv.includes('--help')) return runCompare(argv.slice(1));
  if (argv[0] === 'report' && !argv.includes('--help')) return runReport(argv.slice(1), `agent-trace ${VERSION}`);
  if (argv.includes('--help') || argv.includes('-h') || argv.length === 0) {
    process.stdout.write(USAGE);
    return argv.length === 0 ? 2 : 0;
  }
  if (argv.includes('--version')) {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  return runAnalyze(argv);
}

/** dist/cliCommands.js's entry, for the launcher: the exit status of `agent-trace ARGV`. */
export function main(argv: readonly string[]): Promise<number> {
  return withExitStatus(() => runCommand(argv));
}
