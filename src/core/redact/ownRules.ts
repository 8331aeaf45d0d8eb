import { AnchoredPattern } from './anchoredPattern';
import type { Finding } from './finding';

/**
 * Our own detection rules, for what secretlint's recommended preset does not cover
 * (docs/redaction.md): e-mail addresses, authorization headers, `.env`-style
 * assignments, the user name in home-folder paths, and three provider keys taken from
 * gitleaks' rule set (MIT, © 2019 Zachary Rice; config/gitleaks.toml at
 * 09242ce9c8a60d9b051fc2d166f9e849b88c7ac0), rewritten for JavaScript's engine.
 *
 * Trace text is hostile, and JavaScript's regex engine backtracks: every pattern here is
 * anchored with a look-behind or bounded so that no input makes it super-linear, and a
 * unit test runs each through the recheck ReDoS checker.
 */
export interface OwnRule {
  kind: string;
  /** Global, and sticky-free; group `group` (0: the whole match) is what gets redacted. */
  pattern: RegExp;
  group: number;
  /** Characters of the match after the group (0: the group ends the match). */
  after?: number;
  /** Redacted text that passes `accept` is redacted; the rest is left (placeholders, references). */
  accept?: (value: string) => boolean;
  /** The part of the group to redact (its start kept), or null to leave it: for judging in code what a regex should not. */
  refine?: (value: string) => string | null;
  /** Characters one of which every match holds at most `reach` characters after its start: the pattern runs only near them (AnchoredPattern). */
  anchor?: { chars: string; reach: number };
}

/** Values of an assignment or header that are placeholders or references, not secrets. */
const PLACEHOLDER =
  /^(?:\$|%|<|\{|\[|\*{3}|x{4}|X{4}|\.{3}|your[_-]|change[_-]?me|replace[_-]|placeholder|dummy|example|redacted|none$|null$|undefined$|true$|false$)/i;
/** A dotted reference (`process.env.API_TOKEN`, `settings.auth.token`): code, not a value. */
const DOTTED_REFERENCE = /^[A-Za-z_$][\w$]{0,80}(?:(?:\.|::)[A-Za-z_$][\w$]{0,80}){1,8}$/;
/** An unquoted value that is a constant's or a variable's name (`tokenMint: SUBSCRIPTION_TOKEN_MINT`, `apiToken`): code. */
const CODE_NAME = /^(?:[A-Z]{2,}[A-Z0-9]*(?:_[A-Z0-9]+)+|[a-z]{2,}\d*(?:[A-Z][a-z]{2,}\d*)+)$/;
/** A date (`11/15/2025`, `2024-10-08`): a value, but never a secret. */
const DATE = /^\d{1,4}[/.-]\d{1,2}[/.-]\d{1,4}/;
/** Names that are home folders of a machine, not of a person: left as they are. */
const MACHINE_USERS = new Set([
  'USER',
  'user',
  'runner',
  'ubuntu',
  'root',
  'admin',
  'vscode',
  'node',
  'app',
  'Shared',
  'Public',
  'Default',
  'runneradmin',
]);
/** Words that make a name secret wherever they appear in it (`AWS_SECRET_ACCESS_KEY`, `db_password`, `SECRETKEY`). */
const SECRET_WORD = /secret|passw(?:or)?d|passphrase|credential/i;
/** Name parts that make it secret on their own (`GITHUB_TOKEN`, `_authToken`, `APIKEY`); `tokenizer` or `max_tokens` are not. */
const SECRET_PARTS = new Set(['token', 'apikey', 'authkey', 'accesstoken', 'sessiontoken', 'authtoken']);
/** What may come before `key` in a secret's name (`api_key`, `accessKey`, `PRIVATE_KEY`); `primary_key` or `sort_key` are not. */
const KEY_QUALIFIERS = new Set([
  'api',
  'access',
  'secret',
  'private',
  'client',
  'signing',
  'encryption',
  'master',
  'license',
  'service',
  'account',
  'subscription',
  'auth',
  'app',
  'admin',
  'deploy',
  'webhook',
]);

/**
 * Last name parts that make a name describe a secret rather than hold one: where it is
 * (`private_key_path`, `TOKEN_FILE`, `token_url`), what it is called (`secret_name`), its
 * id, type or size (`token_type`, `secret_length`). gitleaks' generic rule allows the same
 * family (`secret[_.-]?(?:length|name|size)`, `key[_.-]?(?:file|id|name|…)`).
 */
const DESCRIBING_PARTS = new Set([
  'name',
  'names',
  'path',
  'paths',
  'file',
  'files',
  'filename',
  'dir',
  'folder',
  'location',
  'url',
  'uri',
  'urls',
  'endpoint',
  'host',
  'id',
  'ids',
  'arn',
  'ref',
  'type',
  'types',
  'kind',
  'length',
  'len',
  'size',
  'count',
  'version',
  'label',
  'format',
  'field',
  'mode',
  'provider',
  'backend',
  'store',
  'manager',
  'header',
  'prefix',
  'suffix',
  'env',
  'var',
  'variable',
  'enabled',
  'required',
  'expiry',
  'expires',
  'expiration',
  'ttl',
  'timeout',
  'algorithm',
  'alg',
  'scope',
  'scopes',
  'policy',
  'rotation',
  'description',
  'hint',
]);

/** Whether an assignment's name says its value is secret, judged on the name's parts (snake, kebab, dotted or camel case). */
export function isSecretName(name: string): boolean {
  const parts = name
    .split(/[_.-]+|(?<=[a-z0-9])(?=[A-Z])/)
    .filter((p) => p.length > 0)
    .map((p) => p.toLowerCase());
  if (parts.length === 0) return false;
  // `secret_name`, `private_key_path`, `public_key`, `publicToken`: about a secret, or not one.
  if (parts.length > 1 && (DESCRIBING_PARTS.has(parts[parts.length - 1]!) || parts[0] === 'public')) return false;
  if (SECRET_WORD.test(name)) return true;
  return parts.some(
    (p, i) =>
      SECRET_PARTS.has(p) ||
      (p === 'key' && i > 0 && KEY_QUALIFIERS.has(parts[i - 1]!)) ||
      // `PWD` alone is the shell's working folder; `DB_PWD` is a password.
      (p === 'pwd' && parts.length > 1),
  );
}

/** An e-mail domain: dotted labels and a top-level domain of letters (checked on the short captured text). */
const EMAIL_DOMAIN = /^(?:[A-Za-z0-9-]{1,63}\.){1,8}[A-Za-z]{2,24}$/;

/** A URL without a user or password in it (`mongodb://localhost:27017/db`): an address, not a secret. */
const URL_WITHOUT_CREDENTIALS = /^[A-Za-z][A-Za-z0-9+.-]{0,20}:\/\/[^@\s]*$/;

export const OWN_RULES: readonly OwnRule[] = [
  {
    // scheme://user:PASSWORD@host: secretlint's basicauth rule skips what looks like a
    // placeholder (`YOUR_PASSWORD`); a shared trace should lose those too.
    kind: 'url-password',
    pattern: /:\/\/[^\s/:@]{1,64}:([^\s/@]{1,128})@/g,
    group: 1,
    after: 1,
    // `https://oauth2:${GITLAB_TOKEN}@host`: a shell reference, not the token.
    accept: (v) => !/^\$\{?[A-Za-z_]\w*\}?$/.test(v),
  },
  {
    // The look-behind keeps this linear: without it, a long run of word characters is
    // re-scanned from every start (a 1.9 MB Codex trace took 51 s). The domain is one
    // character class matched greedily to its end (nothing to backtrack into); whether it
    // is a real domain is judged in code (`refine`).
    kind: 'email',
    pattern: /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]+/g,
    group: 0,
    // The `@` follows 1 to 64 characters of the local part.
    anchor: { chars: '@', reach: 64 },
    refine: (v) => {
      // `git@github.com` is an SSH user, not a person.
      if (v.startsWith('git@')) return null;
      const trimmed = v.replace(/[.-]+$/, '');
      const domain = trimmed.slice(trimmed.indexOf('@') + 1);
      return EMAIL_DOMAIN.test(domain) ? trimmed : null;
    },
  },
  {
    kind: 'bearer-token',
    pattern: /(?<![A-Za-z0-9_])[Bb]earer[ \t]{1,8}([A-Za-z0-9._~+/-]{12,}=*)/g,
    group: 1,
  },
  {
    // `Authorization: Basic …`, `"authorization": "token …"` (GitHub), with or without a scheme.
    kind: 'authorization-header',
    pattern:
      /(?<![A-Za-z0-9_-])(?:[Pp]roxy-)?[Aa]uthorization["']?[ \t]{0,8}[:=][ \t]{0,8}["']?(?:(?:Basic|Token|token|Digest)[ \t]{1,8})?([A-Za-z0-9._~+/-]{8,}=*)/g,
    group: 1,
    accept: (v) => !PLACEHOLDER.test(v) && !/^(?:Bearer|bearer)$/.test(v),
  },
  {
    // NAME=value, NAME: value, "name": "value" where NAME says it is secret. The name is
    // matched as a bounded identifier and checked in code, so no run of letters can be
    // split between name and keyword in many ways (recheck found that quadratic).
    kind: 'env-assignment',
    // The value is not in the pattern: it is read in code (envAssignment), only after the
    // name passed, so a rejected name (`"cmd": "SENTRY_TOKEN=…"`) consumes nothing and an
    // assignment inside its value is still found.
    pattern: /(?<![A-Za-z0-9_.-])([A-Za-z_][A-Za-z0-9_.-]{0,80})["']?[ \t]{0,8}(?:=|:)[ \t]{0,8}["']?/g,
    group: 0,
    // The operator follows a name of 1 to 81 characters, a quote and 8 spaces at most.
    anchor: { chars: '=:', reach: 90 },
  },
  {
    // /Users/NAME, /home/NAME, C:\Users\NAME (one or two backslashes: JSON-escaped text).
    kind: 'home-user',
    pattern: /(?:\/Users\/|\/home\/|(?<![A-Za-z])[A-Za-z]:\\{1,2}Users\\{1,2})([A-Za-z0-9._-]{1,64})/g,
    group: 1,
    accept: (v) => !MACHINE_USERS.has(v),
  },
  {
    // Claude Code's project folders: ~/.claude/projects/-home-NAME-project.
    kind: 'home-user',
    pattern: /(?<![A-Za-z0-9])-(?:Users|home)-([A-Za-z0-9._]{1,64})-/g,
    group: 1,
    after: 1,
    accept: (v) => !MACHINE_USERS.has(v),
  },
  {
    // Discord webhooks (`https://discord.com/api/webhooks/<id>/<token>`): the token is the
    // secret; gitleaks has no rule for them, and a URL's path parts are otherwise ids.
    kind: 'discord-webhook',
    pattern: /https:\/\/(?:ptb\.|canary\.)?discord(?:app)?\.com\/api\/webhooks\/\d{17,20}\/([\w-]{60,80})(?![\w-])/g,
    group: 1,
  },
  {
    // gitleaks `gcp-api-key`: \b(AIza[\w-]{35})(?:[\x60'"\s;]|\\[nr]|$)
    kind: 'gcp-api-key',
    pattern: /(?<![A-Za-z0-9_-])AIza[\w-]{35}(?![\w-])/g,
    group: 0,
  },
  {
    // gitleaks `jwt`: \b(ey[a-zA-Z0-9]{17,}\.ey[a-zA-Z0-9\/\\_-]{17,}\.(?:[a-zA-Z0-9\/\\_-]{10,}={0,2})?)
    kind: 'jwt',
    // Each run is taken whole (a look-ahead capture and its back-reference: JavaScript's
    // atomic group), so a long run without the dot after it fails once, not once per length.
    pattern: /\bey(?=([A-Za-z0-9]{17,}))\1\.ey(?=([A-Za-z0-9/_-]{17,}))\2\.(?:[A-Za-z0-9/_-]{10,}={0,2})?/g,
    group: 0,
  },
  {
    // Provider tokens whose own form is distinctive, but which gitleaks reads only after its
    // keyword (the provider's name): bare in a path, a URL or a sentence they were missed.
    // Mailgun `key-`/`pubkey-` + 32 hex, Mailchimp 32 hex + `-us<n>`, New Relic `NRJS-`/`NRII-`,
    // Plaid `access-<env>-<uuid>`, SonarQube `squ_`/`sqp_`/`sqa_`, Lob `live_`/`test_`(`pub_`) +
    // hex, Airtable `pat<14>.<64 hex>`, Bedrock short-lived `bedrock-api-key-`, Facebook app
    // tokens `<app id>|<secret>`, Twitter app bearer tokens (`A` × 22 then the token), Telegram
    // bot tokens (`<bot id>:A` + 34, https://core.telegram.org/bots/api#authorizing-your-bot).
    kind: 'provider-token',
    pattern:
      /(?<![A-Za-z0-9_-])(?:(?:pub)?key-[a-f0-9]{32}|[a-f0-9]{32}-us\d{1,2}|NRJS-[a-f0-9]{19}|NRII-[a-z0-9-]{32}|access-(?:sandbox|development|production)-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}|sq[upa]_[A-Za-z0-9]{40}|(?:live|test)_(?:pub_[a-f0-9]{31}|[a-f0-9]{35})|pat[A-Za-z0-9]{14}\.[a-f0-9]{64}|bedrock-api-key-[A-Za-z0-9+/]{24,200}={0,2}|\d{15,16}\|[A-Za-z0-9_-]{27}|A{22}[A-Za-z0-9%]{60,160}|\d{5,16}:A[A-Za-z0-9_-]{34})(?![A-Za-z0-9_-])/g,
    group: 0,
  },
  {
    // gitleaks `anthropic-admin-api-key`: sk-ant-admin01-[a-zA-Z0-9_\-]{93}AA
    kind: 'anthropic',
    pattern: /(?<![A-Za-z0-9_-])sk-ant-admin01-[A-Za-z0-9_-]{93}AA(?![A-Za-z0-9_-])/g,
    group: 0,
  },
];

/** A value that is a file path (`~/.ssh/id_ed25519`, `/run/secrets/db`, `./certs/key.pem`): where a secret is, not the secret. */
const PATH_VALUE = /^(?:~|\.{1,2})?\/(?:[\w.@%+~-]{1,255}\/?){1,40}$/;
/** Characters of an assignment's value: it stops at whitespace, quotes, `$` (a reference follows), brackets and separators. */
const VALUE_CHAR = /[^\s"'`$<>{}()[\],;]/;
/** How far a value is read before it is judged (the judgement needs only its start); an accepted one is then read to its end. */
const VALUE_LOOK = 1024;
/** Fewest characters of a value worth redacting. */
const MIN_VALUE = 8;

/** Where a value stops: a character no value holds, or an escape written out in the text (`\n` in a JSON-escaped diff). */
function valueEnd(text: string, start: number, limit: number, query: boolean): number {
  let end = start;
  while (
    end < limit &&
    VALUE_CHAR.test(text[end]!) &&
    !(query && text[end] === '&') &&
    !(text[end] === '\\' && /[nrt"\\]/.test(text[end + 1] ?? ''))
  )
    end++;
  return end;
}

/**
 * The env-assignment rule: the value after a secret-sounding name, unless it is a
 * placeholder, a reference, a path, a URL without credentials, a number or a date, or an
 * unquoted code name after `:` or a spaced `=` (`tokenMint: TOKEN_MINT`; in `.env` style,
 * `DB_PASSWORD=correcthorsebattery`, a bare word is the value).
 */
function envAssignment(text: string, match: RegExpExecArray): [number, number] | null {
  if (!isSecretName(match[1] ?? '')) return null;
  const start = match.index + match[0].length;
  // In a URL query (`?passwd=…&ot=0`), `&` ends the value.
  const query = match.index > 0 && (text[match.index - 1] === '?' || text[match.index - 1] === '&');
  let end = valueEnd(text, start, Math.min(text.length, start + VALUE_LOOK), query);
  if (end - start < MIN_VALUE) return null;
  const value = text.slice(start, end);
  if (value.startsWith(':') || value.startsWith('\\')) return null;
  if (
    PLACEHOLDER.test(value) ||
    DOTTED_REFERENCE.test(value) ||
    URL_WITHOUT_CREDENTIALS.test(value) ||
    /^\d+(?:\.\d+)?$/.test(value) ||
    PATH_VALUE.test(value) ||
    DATE.test(value)
  )
    return null;
  const quoted = /["']$/.test(match[0]);
  const envStyle = /[A-Za-z0-9_.-]["']?=$/.test(match[0]);
  if (!quoted && !envStyle && CODE_NAME.test(value)) return null;
  end = valueEnd(text, end, text.length, query);
  return [start, end];
}

/** The rules' patterns, run only near their anchor characters where they have one. */
const SCANNERS: ReadonlyArray<(text: string, from: number) => RegExpExecArray | null> = OWN_RULES.map((rule) => {
  if (rule.anchor) {
    const anchored = new AnchoredPattern(rule.pattern, rule.anchor.chars, rule.anchor.reach);
    return (text, from) => anchored.exec(text, from);
  }
  return (text, from) => {
    rule.pattern.lastIndex = from;
    return rule.pattern.exec(text);
  };
});

/** Runs every own rule over `text`. */
export function ownFindings(text: string): Finding[] {
  const found: Finding[] = [];
  OWN_RULES.forEach((rule, r) => {
    const scan = SCANNERS[r]!;
    for (let m = scan(text, 0); m !== null; ) {
      let next = m.index + Math.max(1, m[0].length);
      if (rule.kind === 'env-assignment') {
        const span = envAssignment(text, m);
        if (span !== null) {
          found.push({ kind: rule.kind, start: span[0], end: span[1] });
          next = span[1];
        }
      } else {
        const value = m[rule.group];
        if (value !== undefined && value.length > 0 && (!rule.accept || rule.accept(value))) {
          const kept = rule.refine ? rule.refine(value) : value;
          if (kept !== null && kept.length > 0) {
            const start = m.index + m[0].length - (rule.after ?? 0) - value.length;
            found.push({ kind: rule.kind, start, end: start + kept.length });
          }
        }
      }
      m = scan(text, next);
    }
  });
  // `user:PASSWORD@host` also reads as an e-mail address from the password on: it is the URL's password.
  const passwords = new Set(found.filter((f) => f.kind === 'url-password').map((f) => f.start));
  return passwords.size === 0 ? found : found.filter((f) => f.kind !== 'email' || !passwords.has(f.start));
}
