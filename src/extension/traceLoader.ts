import * as vscode from 'vscode';
import { COMPANION_LAYOUTS } from '../core/trace/formats';
import { parseTrace } from '../core/trace/parseTrace';
import type { FormatId } from '../core/trace/model';
import type { ByteChunks, ParsedTrace, TraceFile } from '../core/trace/parseTrace';
import { companionFiles, listCompanions, regularFileChunks } from '../node/traceFiles';
import type { WorkerFile } from '../protocol/traceWorkerProtocol';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';

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

/** "2,049 MB", "15.6 KB": a file size in the setting's unit (MB of 2^20 bytes, as the setting counts them), KB below one. */
export function megabytes(bytes: number): string {
  const mb = bytes / 2 ** 20;
  if (mb < 1) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${mb >= 10 ? Math.round(mb).toLocaleString('en-US') : mb.toFixed(1)} MB`;
}

/** The message for a file over the limit: its size and the limit, and how to raise it. */
export function tooLargeMessage(name: string, bytes: number, maxBytes: number): string {
  return `${name} is ${megabytes(bytes)}, larger than the ${megabytes(maxBytes)} limit (agentTrace.maxFileSizeMB): not read. Raise the setting to read it.`;
}

/**
 * Reads and parses a trace for the editor: local files are streamed from disk (any
 * size, progress reported; refused unless a regular file), other schemes go through
 * `workspace.fs`. Sub-agent logs beside a Claude Code session are read too, only the
 * ones that are safe (regular files inside the session's folder).
 */
export async function loadTrace(
  uri: vscode.Uri,
  maxBytes: number,
  onProgress: ProgressListener,
  format: FormatId | null = null,
): Promise<ParsedTrace> {
  const files: TraceFile[] = [];
  if (uri.scheme === 'file') {
    const path = uri.fsPath;
    const size = (await stat(path)).size;
    if (size > maxBytes) throw new FileTooLargeError(tooLargeMessage(basename(path), size, maxBytes));
    let read = 0;
    const main = counted(regularFileChunks(path), (n) => {
      read += n;
      onProgress(read, size);
    });
    const listing = await listCompanions(path);
    files.push({ key: basename(path), bytes: main, notes: listing.refused }, ...companionFiles(listing));
  } else {
    const bytes = await vscode.workspace.fs.readFile(uri);
    if (bytes.length > maxBytes)
      throw new FileTooLargeError(tooLargeMessage(basename(uri.path), bytes.length, maxBytes));
    files.push({ key: basename(uri.path), bytes });
    for (const rel of await listRemoteCompanions(uri)) {
      files.push({
        key: rel,
        bytes: (await vscode.workspace.fs.readFile(vscode.Uri.joinPath(uri, '..', rel))) as ByteChunks,
      });
    }
  }
  return parseTrace(files, format ? { format, yieldControl: yieldToEventLoop } : { yieldControl: yieldToEventLoop });
}

/** The files of a trace as the trace worker reads them, the size of the main one, and the companions refused (said on the trace). */
export interface WorkerFiles {
  files: WorkerFile[];
  totalBytes: number | null;
  notes: string[];
}

/**
 * Where the trace worker reads a trace from: local files by path (it streams them
 * itself, regular files only), other schemes as bytes read here through `workspace.fs`.
 * Sub-agent logs beside a Claude Code session come too, only the ones that are safe
 * (listCompanions: regular files inside the session's folder; the others are named in
 * `notes`). A file above `maxBytes` is refused with FileTooLargeError unless
 * `ignoreLimit` (the panel's "Open anyway").
 */
export async function workerFilesFor(uri: vscode.Uri, maxBytes: number, ignoreLimit = false): Promise<WorkerFiles> {
  if (uri.scheme === 'file') {
    const path = uri.fsPath;
    const size = (await stat(path)).size;
    if (size > maxBytes && !ignoreLimit) throw new FileTooLargeError(tooLargeMessage(basename(path), size, maxBytes));
    const listing = await listCompanions(path);
    const files: WorkerFile[] = [{ key: basename(path), path, noFollow: false }];
    for (const c of listing.files)
      files.push({
        key: c.rel,
        path: c.path,
        noFollow: c.noFollow,
        ...(c.expect ? { expect: { ino: c.expect.ino, dev: c.expect.dev } } : {}),
      });
    return { files, totalBytes: size, notes: listing.refused };
  }
  const bytes = await vscode.workspace.fs.readFile(uri);
  if (bytes.length > maxBytes && !ignoreLimit)
    throw new FileTooLargeError(tooLargeMessage(basename(uri.path), bytes.length, maxBytes));
  const files: WorkerFile[] = [{ key: basename(uri.path), bytes }];
  for (const rel of await listRemoteCompanions(uri))
    files.push({ key: rel, bytes: await vscode.workspace.fs.readFile(vscode.Uri.joinPath(uri, '..', rel)) });
  return { files, totalBytes: bytes.length, notes: [] };
}

/** Companions of a trace on another file system (no links or FIFOs to fear there): each layout's folder, its files only. */
async function listRemoteCompanions(uri: vscode.Uri): Promise<string[]> {
  const found: string[] = [];
  for (const layout of COMPANION_LAYOUTS) {
    const folder = layout.folderOf(basename(uri.path));
    if (folder === null) continue;
    try {
      const entries = await vscode.workspace.fs.readDirectory(vscode.Uri.joinPath(uri, '..', folder));
      found.push(
        ...entries
          .filter(([name, type]) => type === vscode.FileType.File && layout.isCompanionName(name))
          .map(([name]) => `${folder}/${name}`)
          .sort(),
      );
    } catch {
      // No such folder: a trace without companions.
    }
  }
  return found;
}

/**
 * The URI of one of a trace's files, by its index in `files` (0 = the trace itself; the
 * others are the companion paths the host listed). Null for an index the trace does not
 * have: the page names files by index, and only the loaded trace's files can be opened.
 */
export function traceFileUri(traceUri: vscode.Uri, files: readonly string[], index: number): vscode.Uri | null {
  if (!Number.isInteger(index) || index < 0 || index >= Math.max(1, files.length)) return null;
  if (index === 0) return traceUri;
  const key = files[index]!;
  // Keys are relative paths the listing made; refuse anything that would climb out anyway.
  const parts = key.split('/');
  if (parts.some((p) => p === '' || p === '.' || p === '..' || p.includes('\\'))) return null;
  return vscode.Uri.joinPath(traceUri, '..', ...parts);
}
