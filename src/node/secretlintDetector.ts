import { rules as presetRules } from '@secretlint/secretlint-rule-preset-recommend';
import type { SecretLintRuleContext, SecretLintRuleReportHandler, SecretLintSourceCode } from '@secretlint/types';
import type { Finding, SecretDetector } from '../core/redact/finding';
import { GITLEAKS_SOURCE } from '../core/redact/gitleaksRules';
import { Redactor, type RedactionMode, type RedactorOptions } from '../core/redact/redactor';

/** The preset version pinned in package.json; its test vectors are test/fixtures/secretlint-vectors. */
export const SECRETLINT_PRESET = 'secretlint preset-recommend 13.0.4';

/**
 * Rules of the preset we do not run: `filter-comments` honours `secretlint-disable`
 * comments, and a comment inside a hostile trace must not switch redaction off.
 */
const SKIPPED_RULES = new Set(['@secretlint/secretlint-rule-filter-comments']);

/**
 * Options that differ from the preset's defaults: the AWS rule reports access key ids
 * (`AKIA…`) and account ids only when asked, and a redactor should remove them.
 */
const RULE_OPTIONS: Record<string, object> = { '@secretlint/secretlint-rule-aws': { enableIDScanRule: true } };

const RULE_PREFIX = '@secretlint/secretlint-rule-';

/**
 * secretlint's recommended preset driven rule by rule, without @secretlint/core: the core
 * keeps a global profiler that records a performance mark per rule per run and never
 * clears them (one lint per line of a large trace left a process busy for minutes), and
 * it adds only what redaction does not want (message filtering, disable comments).
 *
 * Each rule is created once; a run hands every rule the text and collects what it
 * reports. The rules' messages are never formatted: they quote the secret, and nothing
 * the redactor keeps may hold one. The kind is the rule id without its package prefix
 * (`aws`, `openai`, `privatekey`).
 *
 * Node only (src/node): the preset's bundle imports `node:path` (for a file name in one
 * message) and reads a file for `.p12` sources, which we never give it (no file path).
 */
export function createSecretlintDetector(): SecretDetector {
  let sink: Finding[] = [];
  let kind = '';
  const context: SecretLintRuleContext = {
    sharedOptions: {},
    createTranslator: () => (messageId: string | number | symbol) => ({
      message: String(messageId),
      messageId: String(messageId),
      data: undefined,
    }),
    report: (descriptor) => {
      sink.push({ kind, start: descriptor.range[0], end: descriptor.range[1] });
    },
    ignore: () => {},
  } as SecretLintRuleContext;
  const handlers: Array<{ kind: string; handler: SecretLintRuleReportHandler }> = [];
  for (const rule of presetRules) {
    if (SKIPPED_RULES.has(rule.meta.id)) continue;
    kind = rule.meta.id.replace(RULE_PREFIX, '');
    handlers.push({ kind, handler: rule.create(context, (RULE_OPTIONS[rule.meta.id] ?? {}) as never) });
  }
  return {
    async detect(text: string): Promise<Finding[]> {
      const found: Finding[] = [];
      sink = found;
      const source = sourceOf(text);
      for (const h of handlers) {
        kind = h.kind;
        const pending = h.handler.file?.(source);
        if (pending) await pending;
      }
      return found;
    },
  };
}

function sourceOf(content: string): SecretLintSourceCode {
  return {
    hasBOM: false,
    content,
    filePath: undefined,
    physicalFilePath: undefined,
    contentType: 'text',
    ext: '',
    getFilePath: () => undefined,
    getPhysicalFilePath: () => undefined,
    // Only the comment filter (not run) reads positions.
    locationToRange: () => [0, 0],
    rangeToLocation: () => ({ start: { line: 1, column: 0 }, end: { line: 1, column: 0 } }),
    positionToIndex: () => 0,
    indexToPosition: () => ({ line: 1, column: 0 }),
  };
}

/**
 * A redactor with secretlint's preset, gitleaks' rule set and our own rules: what every
 * export uses unless --no-redact. Both take bare hex, UUIDs, long numbers and short random
 * tokens; default leaves those the trace explains as ids, `strict` (--redact strict) takes them too.
 */
export function createRedactor(
  mode: RedactionMode = 'default',
  hooks: Pick<RedactorOptions, 'onRedacted' | 'onLeftAsId'> = {},
): Redactor {
  const names = `${SECRETLINT_PRESET} + gitleaks rules ${GITLEAKS_SOURCE.commit.slice(0, 7)} + own rules + bare hex, UUIDs, numbers, short tokens${mode === 'strict' ? ', ids included (strict)' : ' the trace does not explain as ids'}`;
  return new Redactor([createSecretlintDetector()], names, { mode, ...hooks });
}
