import { countTokens as countO200k } from 'gpt-tokenizer/encoding/o200k_base';
import { lineNumberPrefixes } from '../core/context/tokenCounter';
import type { TokenCounter, TokenCounterFor } from '../core/context/tokenCounter';

/**
 * The anatomy's tokenizers (docs/guide/context.md#tokenizers): gpt-tokenizer's o200k_base for
 * OpenAI's current models (the exact encoding of GPT-4o, GPT-4.1, GPT-5, o-series, Codex) and
 * as the stand-in for Claude, Gemini and open models, whose tokenizers are not published for
 * JavaScript. GPT-4 and GPT-3.5 (cl100k_base) are counted with it too: their encoding would add
 * 1.2 MB to the CLI for models agents no longer run. For Claude, one correction (CLAUDE_STANDIN).
 * Calibration against the log corrects the stand-in's scale per session. Kept out of
 * src/core: its ranks are megabytes and only the CLI and the host load them.
 */

/** Trace text may contain `<|endoftext|>` and the like: counted as ordinary text, never refused. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/** OpenAI's o200k_base: exact for GPT-4o and later, a stand-in elsewhere. */
export const O200K: TokenCounter = { name: 'o200k_base (gpt-tokenizer)', count: (text) => countO200k(text, AS_TEXT) };

/**
 * The stand-in for Claude: o200k_base, less one token per line-number prefix of a file read
 * (`     1→`, the form Claude Code sends the Read tool's lines in). o200k_base splits the
 * space before a number from it (`"    " " " "1" "→"`, 4 tokens); Anthropic's own published
 * tokenizer (@anthropic-ai/tokenizer, Claude 2's) keeps it with the number
 * (`"    " " 1" "→"`, 3), and the logged growth of calls that appended file reads agrees
 * (docs/performance.md#context-anatomy-benchcontext). Anthropic's tokenizer itself is not used: it is not
 * Claude 3's and later (its README says so), and on the samples it matched the log no better.
 */
export const CLAUDE_STANDIN: TokenCounter = {
  name: 'o200k_base (gpt-tokenizer), line-number prefixes of file reads one token less',
  count: (text) => countO200k(text, AS_TEXT) - lineNumberPrefixes(text),
};

/** The counter for a model id: the Claude stand-in for Claude models, o200k_base for every other (see above). */
export const tokenCounterFor: TokenCounterFor = (model) =>
  (model ?? '').toLowerCase().includes('claude') ? CLAUDE_STANDIN : O200K;
