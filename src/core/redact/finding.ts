/** A secret found in a text: its kind (a rule id) and where it is, as UTF-16 offsets [start, end). */
export interface Finding {
  kind: string;
  start: number;
  end: number;
}

/**
 * Finds secrets in text. The redactor runs one or more of these over batches of decoded
 * strings: our own rules (ownRules.ts) everywhere, secretlint's preset on the CLI and the
 * extension host (src/node/secretlintDetector.ts).
 */
export interface SecretDetector {
  detect(text: string): Finding[] | Promise<Finding[]>;
}
