import * as vscode from 'vscode';
import { readCalibrationDocument } from '../core/sim/calibrate';
import type { WhatIfCalibration } from '../protocol/messages';

/** A calibration file is a few kilobytes (the fit and a few residuals); anything far bigger is not one. */
const MAX_CALIBRATION_BYTES = 16 * 2 ** 20;

/**
 * Asks the person for a calibration file (`agent-trace calibrate RESULTS -o CAL.json`) and
 * reads its fit; null when they cancel. The file is theirs to choose, never the page's: the
 * page only asks for the dialog. Its content is checked like any input (readCalibrationDocument);
 * a file that is not a calibration is answered with an error naming it.
 */
export async function pickCalibration(near: vscode.Uri): Promise<WhatIfCalibration | null> {
  const picked = await vscode.window.showOpenDialog({
    defaultUri: vscode.Uri.joinPath(near, '..'),
    canSelectMany: false,
    filters: { 'Calibration (agent-trace calibrate -o)': ['json'] },
    openLabel: 'Use these step times',
    title: 'Step times from your own server: a calibration file',
  });
  const uri = picked?.[0];
  if (!uri) return null;
  const name = uri.path.split('/').pop() ?? 'calibration';
  const stat = await vscode.workspace.fs.stat(uri);
  if (stat.size > MAX_CALIBRATION_BYTES)
    throw new Error(`${name} is ${Math.round(stat.size / 2 ** 20)} MiB: not a calibration file`);
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder().decode(await vscode.workspace.fs.readFile(uri)));
  } catch (e) {
    throw new Error(`${name}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const read = readCalibrationDocument(doc);
  if (!read.ok) throw new Error(`${name}: ${read.error}`);
  return { name, ...read.fit };
}
