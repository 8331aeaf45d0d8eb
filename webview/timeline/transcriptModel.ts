import { formatCount } from '../../src/core/text/formatNumbers';
import { TRANSCRIPT_CHARS, TRANSCRIPT_MAX_CHARS } from '../../src/core/view/transcript';
import type { CallTranscript, TranscriptEntry, TranscriptKind } from '../../src/core/view/transcript';

/** A call's transcript in the details pane: closed, being read, read, or failed. */
export type TranscriptState =
  | { kind: 'closed' }
  | { kind: 'loading'; maxChars: number }
  | { kind: 'loaded'; transcript: CallTranscript }
  | { kind: 'error'; message: string };

/** One entry as the pane draws it. */
export interface TranscriptItem {
  kind: TranscriptKind;
  /** "Prompt", "Bash (tool call)", "Result of Bash (error)". */
  title: string;
  /** "line 12" (1-based), for the hover and screen readers. */
  where: string;
  text: string;
  /** "Show more (2,000 of 9,412 characters shown)" when clipped, else null. */
  more: string | null;
}

const KIND_WORDS: Record<TranscriptKind, string> = {
  prompt: '',
  input: '',
  assistant: '',
  thinking: '',
  'tool-call': ' (tool call)',
  'tool-result': '',
};

/** The entries of a transcript as the pane lists them. */
export function transcriptItems(t: CallTranscript, fileName: (file: number) => string = () => ''): TranscriptItem[] {
  return t.entries.map((e: TranscriptEntry) => {
    const shown = [...e.text].length;
    const file = fileName(e.file);
    return {
      kind: e.kind,
      title: `${e.label}${KIND_WORDS[e.kind]}${e.error ? ' (error)' : ''}`,
      where: `${file ? `${file}:` : 'line '}${formatCount(e.line + 1)}`,
      text: e.text,
      more:
        shown < e.chars && t.maxChars < TRANSCRIPT_MAX_CHARS
          ? `Show more (${formatCount(shown)} of ${formatCount(e.chars)} characters shown)`
          : shown < e.chars
            ? `${formatCount(shown)} of ${formatCount(e.chars)} characters shown: Show source opens the rest`
            : null,
    };
  });
}

/** The size to ask for after "Show more": eight times as much, up to the most the host gives. */
export function moreChars(current: number): number {
  return Math.min(TRANSCRIPT_MAX_CHARS, Math.max(TRANSCRIPT_CHARS, current) * 8);
}

export { TRANSCRIPT_CHARS };
