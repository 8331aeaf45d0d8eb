import { countTokens as countCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as countO200k } from 'gpt-tokenizer/encoding/o200k_base';
import type { TokenCounter, TokenCounterFor } from '../core/context/tokenCounter';

/**
 * The anatomy's tokenizers (docs/guide/context.md#tokenizers): gpt-tokenizer's o200k_base for
 * OpenAI's current models (the exact encoding of GPT-4o, GPT-4.1, GPT-5, o-series, Codex) and
 * as the stand-in for Claude, Gemini and open models, whose tokenizers are not published for
 * JavaScript; cl100k_base for GPT-4 and GPT-3.5. Calibration against the log corrects the
 * stand-in's scale per session. Kept out of src/core: its ranks are megabytes and only the
 * CLI and the host load them.
 */

/** Trace text may contain `<|endoftext|>` and the like: counted as ordinary text, never refused. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/** OpenAI's o200k_base: exact for GPT-4o and later, a stand-in elsewhere. */
export const O200K: TokenCounter = { name: 'o200k_base (gpt-tokenizer)', count: (text) => countO200k(text, AS_TEXT) };
/** OpenAI's cl100k_base: exact for GPT-4 and GPT-3.5. */
export const CL100K: TokenCounter = { name: 'cl100k_base (gpt-tokenizer)', count: (text) => countCl100k(text, AS_TEXT) };

/** The counter for a model id: cl100k_base for GPT-4 / GPT-3.5, o200k_base for everything else. */
export const tokenCounterFor: TokenCounterFor = (model) => {
  const m = (model ?? '').toLowerCase();
  if (/^(openai\/)?gpt-(4(?![o.])|3\.5)/.test(m)) return CL100K;
  return O200K;
};
