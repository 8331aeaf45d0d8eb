import * as vscode from 'vscode';
import { uiText } from '../core/text/safeText';
import type { Severity } from '../core/trace/model';
import type { ParsedTrace } from '../core/trace/parseTrace';
import { PROBLEM_LOOPS_MAX } from '../core/view/traceService';
import type { TraceProblems } from '../core/view/traceService';
import { attemptMessage, loopMessage } from './traceAnalysis';
import type { TraceAnalysis } from './traceAnalysis';
import { traceFileUri } from './traceLoader';

/** The code of every retry-loop entry (its warning, and the note on loops left out): `agentTrace.problems.retryLoops` hides them. */
export const RETRY_LOOP_CODE = 'retry-loop';

/** Without the retry-loop entries (the setting is off); read errors always stay. */
export function withoutRetryLoops(diagnostics: readonly vscode.Diagnostic[]): vscode.Diagnostic[] {
  return diagnostics.filter((d) => d.code !== RETRY_LOOP_CODE);
}

/** Problems of one file: its URI and its diagnostics. */
export interface FileDiagnostics {
  uri: vscode.Uri;
  diagnostics: vscode.Diagnostic[];
}

/** Problems of a trace, keyed by the URI string of each of its files. */
export type TraceDiagnostics = Map<string, FileDiagnostics>;

const SEVERITY: Record<Severity, vscode.DiagnosticSeverity> = {
  error: vscode.DiagnosticSeverity.Error,
  warning: vscode.DiagnosticSeverity.Warning,
  info: vscode.DiagnosticSeverity.Information,
};

/** A whole line, for a diagnostic on a record (JSON Lines records are one line each). */
function lineRange(line: number): vscode.Range {
  const l = Math.max(0, line);
  return new vscode.Range(l, 0, l, Number.MAX_SAFE_INTEGER);
}

/** Longest Problems message: a trace can hold a 10 MiB value, and every message may quote one. */
const MESSAGE_MAX = 1000;

/** A Problems message from trace-derived text: controls and bidi escaped, clipped (Problems show plain text). */
function problemText(message: string): string {
  return uiText(message, { max: MESSAGE_MAX });
}

/** A message for the file as a whole: on its first line. */
export function fileProblem(
  uri: vscode.Uri,
  message: string,
  severity = vscode.DiagnosticSeverity.Error,
): TraceDiagnostics {
  const d = new vscode.Diagnostic(new vscode.Range(0, 0, 0, 0), problemText(message), severity);
  d.source = 'Agent Trace';
  return new Map([[uri.toString(), { uri, diagnostics: [d] }]]);
}

/**
 * The Problems entries of a parsed trace: read errors as Errors, each retry loop as a
 * Warning on its first attempt's line with the later attempts as related locations.
 * Every file of the trace gets an entry (maybe empty), so publishing it replaces what
 * an earlier parse left.
 */
export function traceDiagnostics(traceUri: vscode.Uri, parsed: ParsedTrace, analysis: TraceAnalysis): TraceDiagnostics {
  const { model, problem } = parsed;
  const loops = analysis.sessions.flatMap((s) => s.analysis.retry.loops);
  return problemDiagnostics(traceUri, {
    files: model.files,
    problem,
    diagnostics: model.diagnostics,
    loops: loops.slice(0, PROBLEM_LOOPS_MAX),
    loopsLeftOut: Math.max(0, loops.length - PROBLEM_LOOPS_MAX),
  });
}

/**
 * Later attempts of a retry loop listed as a problem's related locations; the rest are
 * counted. A loop across a million-call trace had 18,000 attempts, and their locations
 * cost the extension host ~130 MiB to build and send for one entry of the Problems view.
 */
export const RELATED_ATTEMPTS_MAX = 100;

/** The Problems entries of a trace from its problems in plain data (what the inspector's worker sends). */
export function problemDiagnostics(traceUri: vscode.Uri, problems: TraceProblems): TraceDiagnostics {
  const { files, problem } = problems;
  const out: TraceDiagnostics = new Map();
  const listFor = (fileIndex: number): vscode.Diagnostic[] => {
    const uri = traceFileUri(traceUri, files, fileIndex) ?? traceUri;
    const key = uri.toString();
    let entry = out.get(key);
    if (!entry) {
      entry = { uri, diagnostics: [] };
      out.set(key, entry);
    }
    return entry.diagnostics;
  };
  for (let i = 0; i < Math.max(1, files.length); i++) listFor(i);
  const uris = new Map<number, vscode.Uri>();
  const fileUri = (index: number): vscode.Uri => {
    let uri = uris.get(index);
    if (!uri) {
      uri = traceFileUri(traceUri, files, index) ?? traceUri;
      uris.set(index, uri);
    }
    return uri;
  };
  if (problem) {
    const d = new vscode.Diagnostic(
      new vscode.Range(0, 0, 0, 0),
      problemText(problem.message),
      vscode.DiagnosticSeverity.Error,
    );
    d.source = 'Agent Trace';
    listFor(0).push(d);
  }
  for (const d of problems.diagnostics) {
    const diagnostic = new vscode.Diagnostic(lineRange(d.line), problemText(d.message), SEVERITY[d.severity]);
    diagnostic.source = 'Agent Trace';
    listFor(d.file).push(diagnostic);
  }
  for (const loop of problems.loops) {
    const first = loop.attempts[0]!.source;
    const warning = new vscode.Diagnostic(
      lineRange(first.line),
      problemText(loopMessage(loop)),
      vscode.DiagnosticSeverity.Warning,
    );
    warning.source = 'Agent Trace';
    warning.code = RETRY_LOOP_CODE;
    const later = loop.attempts.slice(1, 1 + RELATED_ATTEMPTS_MAX);
    warning.relatedInformation = later.map(
      (attempt, i) =>
        new vscode.DiagnosticRelatedInformation(
          new vscode.Location(fileUri(attempt.source.file), new vscode.Position(attempt.source.line, 0)),
          problemText(attemptMessage(loop, i + 1)),
        ),
    );
    const more = loop.attempts.length - 1 - later.length;
    if (more > 0) {
      const next = loop.attempts[1 + later.length]!.source;
      warning.relatedInformation.push(
        new vscode.DiagnosticRelatedInformation(
          new vscode.Location(fileUri(next.file), new vscode.Position(next.line, 0)),
          `${more.toLocaleString('en-US')} more attempts from here on: the inspector's Retry loops table lists every one`,
        ),
      );
    }
    listFor(first.file).push(warning);
  }
  if (problems.loopsLeftOut > 0) {
    const n = problems.loopsLeftOut;
    const note = new vscode.Diagnostic(
      lineRange(0),
      `${n.toLocaleString('en-US')} more retry loop${n === 1 ? ' is' : 's are'} not listed here (the Problems view shows 1,000 problems per file at most); the inspector's Retry loops table lists every one.`,
      vscode.DiagnosticSeverity.Information,
    );
    note.source = 'Agent Trace';
    note.code = RETRY_LOOP_CODE;
    listFor(0).push(note);
  }
  return out;
}
