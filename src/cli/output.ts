import { terminalJson, terminalText } from '../core/text/safeText';

/**
 * Everything the CLI prints goes through here: trace text can hold escape sequences
 * (clear the screen, retitle the window, plant a hyperlink), so control and bidi
 * characters are printed as visible escapes, and JSON escapes the ones it would
 * otherwise pass through raw.
 */
export function printText(text: string, stream: NodeJS.WriteStream = process.stdout): void {
  stream.write(terminalText(text));
}

/** A line on stderr (a note, an error), made safe the same way. */
export function printError(text: string): void {
  process.stderr.write(terminalText(text.endsWith('\n') ? text : `${text}\n`));
}

/** A JSON document on stdout, two-space indented. */
export function printJson(value: unknown): void {
  process.stdout.write(terminalJson(JSON.stringify(value, null, 2)) + '\n');
}
