import * as vscode from 'vscode';
import { claudeSubagentFolder, isSubagentLogName } from '../core/trace/claudeCode/companions';
import { parseTrace } from '../core/trace/parseTrace';
import type { FormatId } from '../core/trace/model';
import type { ByteChunks, ParsedTrace, TraceFile } from '../core/trace/parseTrace';
import { listCompanions } from '../node/traceFiles';
import type { WorkerFile } from '../node/traceWorkerProtocol';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Progress callback: bytes of the main file read so far and its size. */
export type ProgressListener = (bytesRead: number, totalBytes: number | null) => void;

/** Lets the extension host serve other work between slices of a large file. */
export const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function* counted(chunks: AsyncIterable<Uint8Array>, onBytes: (n: number) => void): AsyncGenerator<Uint8Array> {
  for await (const chunk of chunks) {
    onBytes(chunk.length);
    yield chunk;
  }
}

/** Raised when a file is larger than `agentTrace.maxFileSizeMB`. */
export class FileTooLargeError extends Error {}

/**
 * Reads and parses a trace for the editor: local files are streamed from disk (any
 * size, progress reported), other schemes go through `workspace.fs`. Sub-agent logs
 * beside a Claude Code session are read too.
 */
export async function loadTrace(uri: vscode.Uri, maxBytes: number, onProgress: ProgressListener, format: FormatId | null = null): Promise<ParsedTrace> {
  const files: TraceFile[] = [];
  if (uri.scheme === 'file') {
    const path = uri.fsPath;
    const size = (await stat(path)).size;
    if (size > maxBytes) throw new FileTooLargeError(`${basename(path)} is ${(size / 2 ** 20).toFixed(0)} MB, above agentTrace.maxFileSizeMB.`);
    const companions = await listCompanions(path);
    let read = 0;
    const main = counted(createReadStream(path, { highWaterMark: 256 * 1024 }), (n) => {
      read += n;
      onProgress(read, size);
    });
    files.push({ key: basename(path), bytes: main });
    for (const rel of companions) files.push({ key: rel, bytes: createReadStream(join(dirname(path), rel)) });
  } else {
    const bytes = await vscode.workspace.fs.readFile(uri);
    if (bytes.length > maxBytes) throw new FileTooLargeError(`${basename(uri.path)} is above agentTrace.maxFileSizeMB.`);
    files.push({ key: basename(uri.path), bytes });
    for (const rel of await listRemoteCompanions(uri)) {
      files.push({ key: rel, bytes: (await vscode.workspace.fs.readFile(vscode.Uri.joinPath(uri, '..', rel))) as ByteChunks });
    }
  }
  return parseTrace(files, format ? { format, yieldControl: yieldToEventLoop } : { yieldControl: yieldToEventLoop });
}

/** The files of a trace as the trace worker reads them, and the size of the main one. */
export interface WorkerFiles {
  files: WorkerFile[];
  totalBytes: number | null;
}

/**
 * Where the trace worker reads a trace from: local files by path (it streams them
 * itself), other schemes as bytes read here through `workspace.fs`. Sub-agent logs beside
 * a Claude Code session come too. A file above `maxBytes` is refused with
 * FileTooLargeError unless `ignoreLimit` (the panel's "Open anyway").
 */
export async function workerFilesFor(uri: vscode.Uri, maxBytes: number, ignoreLimit = false): Promise<WorkerFiles> {
  const tooLarge = (size: number): FileTooLargeError =>
    new FileTooLargeError(`${basename(uri.path)} is ${(size / 2 ** 20).toFixed(0)} MB, above agentTrace.maxFileSizeMB (${(maxBytes / 2 ** 20).toFixed(0)} MB).`);
  if (uri.scheme === 'file') {
    const path = uri.fsPath;
    const size = (await stat(path)).size;
    if (size > maxBytes && !ignoreLimit) throw tooLarge(size);
    const files: WorkerFile[] = [{ key: basename(path), path }];
    for (const rel of await listCompanions(path)) files.push({ key: rel, path: join(dirname(path), rel) });
    return { files, totalBytes: size };
  }
  const bytes = await vscode.workspace.fs.readFile(uri);
  if (bytes.length > maxBytes && !ignoreLimit) throw tooLarge(bytes.length);
  const files: WorkerFile[] = [{ key: basename(uri.path), bytes }];
  for (const rel of await listRemoteCompanions(uri)) files.push({ key: rel, bytes: await vscode.workspace.fs.readFile(vscode.Uri.joinPath(uri, '..', rel)) });
  return { files, totalBytes: bytes.length };
}

async function listRemoteCompanions(uri: vscode.Uri): Promise<string[]> {
  const folder = claudeSubagentFolder(basename(uri.path));
  if (folder === null) return [];
  try {
    const entries = await vscode.workspace.fs.readDirectory(vscode.Uri.joinPath(uri, '..', folder));
    return entries
      .filter(([name, type]) => type === vscode.FileType.File && isSubagentLogName(name))
      .map(([name]) => `${folder}/${name}`)
      .sort();
  } catch {
    return [];
  }
}

/** The URI of one of a trace's files, from its key (0 = the trace itself, else a relative path). */
export function fileUri(traceUri: vscode.Uri, files: readonly string[], key: string): vscode.Uri {
  if (key === files[0] || key === '') return traceUri;
  return vscode.Uri.joinPath(traceUri, '..', ...key.split('/'));
}
