import { countTokens as countO200k } from 'gpt-tokenizer/encoding/o200k_base';
import type { TokenCounter, TokenCounterFor } from '../core/context/tokenCounter';

/**
 * The anatomy's tokenizers (docs/guide/context.md#tokenizers): gpt-tokenizer's o200k_base for
 * OpenAI's current models (the exact encoding of GPT-4o, GPT-4.1, GPT-5, o-series, Codex) and
 * as the stand-in for Claude, Gemini and open models, whose tokenizers are not published for
 * JavaScript. GPT-4 and GPT-3.5 (cl100k_base) are counted with it too: their encoding would add
 * 1.2 MB to the CLI for models agents no longer run. Calibration against the log corrects the
 * stand-in's scale per session. Kept out of src/core: its ranks are megabytes and only the
 * CLI and the host load them.
 */

/** Trace text may contain `<|endoftext|>` and the like: counted as ordinary text, never refused. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/** OpenAI's o200k_base: exact for GPT-4o and later, a stand-in elsewhere. */
export const O200K: TokenCounter = { name: 'o200k_base (gpt-tokenizer)', count: (text) => countO200k(text, AS_TEXT) };
/** The counter for a model id: o200k_base for every model (see above). */
export const tokenCounterFor: TokenCounterFor = () => O200K;
