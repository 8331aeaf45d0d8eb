import GithubSlugger from 'github-slugger';
import MarkdownIt from 'markdown-it';
import type { Token } from 'markdown-it';

// Links and headings of a Markdown file as a renderer sees them: markdown-it parses the file
// (so links inside code spans and fenced blocks are not links), and github-slugger turns
// each heading into the anchor GitHub gives it (lower case, punctuation dropped, spaces to
// hyphens, a repeated heading suffixed -1, -2, …).

const md = new MarkdownIt({ html: true });

/** One link or image of a Markdown file. */
export interface MarkdownLink {
  /** The target as written (after markdown-it's normalisation, percent-decoded). */
  target: string;
  image: boolean;
  /** 1-based line of the paragraph or block that holds it. */
  line: number;
}

function inlineText(children: Token[] | null): string {
  return (children ?? [])
    .map((t) =>
      t.type === 'text' || t.type === 'code_inline' ? t.content : t.type === 'image' ? inlineText(t.children) : '',
    )
    .join('');
}

function decode(href: string): string {
  try {
    return decodeURI(href);
  } catch {
    return href;
  }
}

/** Every link and image target of a Markdown text, in order. */
export function markdownLinks(text: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  for (const block of md.parse(text, {})) {
    if (block.type !== 'inline') continue;
    const line = (block.map?.[0] ?? 0) + 1;
    const walk = (tokens: Token[]): void => {
      for (const t of tokens) {
        if (t.type === 'link_open') links.push({ target: decode(t.attrGet('href') ?? ''), image: false, line });
        if (t.type === 'image') {
          links.push({ target: decode(t.attrGet('src') ?? ''), image: true, line });
          walk(t.children ?? []);
        }
      }
    };
    walk(block.children ?? []);
  }
  return links;
}

/** The anchors GitHub makes for a Markdown text's headings, plus explicit `<a id|name="…">` anchors. */
export function markdownAnchors(text: string): Set<string> {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  const tokens = md.parse(text, {});
  tokens.forEach((t, i) => {
    if (t.type === 'heading_open') anchors.add(slugger.slug(inlineText(tokens[i + 1]?.children ?? null)));
    if (t.type === 'html_block' || t.type === 'inline') {
      const html =
        t.type === 'html_block'
          ? t.content
          : (t.children ?? [])
              .filter((c) => c.type === 'html_inline')
              .map((c) => c.content)
              .join('');
      for (const m of html.matchAll(/<a\s[^>]*(?:id|name)="([^"]+)"/gi)) anchors.add(m[1]!);
    }
  });
  return anchors;
}

/** The headings of a Markdown text, as plain text with their level (code blocks ignored). */
export function markdownHeadings(text: string): Array<{ level: number; text: string; line: number }> {
  const tokens = md.parse(text, {});
  return tokens.flatMap((t, i) =>
    t.type === 'heading_open'
      ? [
          {
            level: Number(t.tag.slice(1)),
            text: inlineText(tokens[i + 1]?.children ?? null),
            line: (t.map?.[0] ?? 0) + 1,
          },
        ]
      : [],
  );
}

/** True for a link to another site or scheme (`https:`, `mailto:`, `//host`), false for a path in this repository. */
export function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');
}
