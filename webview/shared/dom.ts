import { displayText } from '../../src/core/text/safeText';

/**
 * Attributes, text and children for `el`. Text always goes through textContent: trace
 * data is hostile. Text and titles are also passed through displayText, so a bidi
 * override or a control character in a trace shows as an escape instead of turning
 * what follows around.
 */
export interface ElementSpec {
  className?: string;
  text?: string;
  title?: string;
  attrs?: Record<string, string>;
  data?: Record<string, string>;
}

/** Creates an element without ever parsing HTML. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  spec: ElementSpec = {},
  children: (Node | null)[] = [],
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  applySpec(node, spec);
  for (const child of children) if (child) node.appendChild(child);
  return node;
}

/**
 * A sentence whose `backticked` names (files, commands, tools, as the core writes them for
 * a terminal too) show as code: text nodes and <code> elements, never parsed HTML. An odd
 * number of backticks (a name holding one) leaves the sentence as plain text.
 */
export function withCode(text: string): Node[] {
  const pieces = text.split('`');
  if (pieces.length % 2 === 0) return [document.createTextNode(displayText(text))];
  const nodes: Node[] = [];
  pieces.forEach((piece, i) => {
    if (i % 2 === 1) nodes.push(el('code', { text: piece }));
    else if (piece !== '') nodes.push(document.createTextNode(displayText(piece)));
  });
  return nodes;
}

/** Creates a custom element (the @vscode-elements controls) the same way. */
export function custom(tag: string, spec: ElementSpec = {}, children: (Node | null)[] = []): HTMLElement {
  const node = document.createElement(tag);
  applySpec(node, spec);
  for (const child of children) if (child) node.appendChild(child);
  return node;
}

function applySpec(node: HTMLElement, spec: ElementSpec): void {
  if (spec.className) node.className = spec.className;
  if (spec.text !== undefined) node.textContent = displayText(spec.text);
  if (spec.title !== undefined) node.title = displayText(spec.title);
  for (const [k, v] of Object.entries(spec.attrs ?? {})) node.setAttribute(k, v);
  for (const [k, v] of Object.entries(spec.data ?? {})) node.dataset[k] = v;
}

/** A codicon glyph from the page's codicon stylesheet; decorative, so hidden from screen readers. */
export function icon(name: string, extraClass = ''): HTMLSpanElement {
  return el('span', {
    className: `codicon codicon-${name}${extraClass ? ` ${extraClass}` : ''}`,
    attrs: { 'aria-hidden': 'true' },
  });
}

/** A button that looks like a link (VS Code's textLink style) and runs `onClick`. */
export function linkButton(label: string, onClick: () => void, spec: ElementSpec = {}): HTMLButtonElement {
  const b = el('button', {
    ...spec,
    className: `link-button${spec.className ? ` ${spec.className}` : ''}`,
    text: label,
    attrs: { type: 'button', ...(spec.attrs ?? {}) },
  });
  b.addEventListener('click', onClick);
  return b;
}

/** A data table: a hidden caption, one header row (columns from `numericFrom` right-aligned), and the rows. */
export function table(
  className: string,
  caption: string,
  head: string[],
  rows: HTMLTableRowElement[],
  numericFrom = 1,
): HTMLTableElement {
  return el('table', { className: `data-table ${className}` }, [
    el('caption', { className: 'visually-hidden', text: caption }),
    el('thead', {}, [
      el(
        'tr',
        {},
        head.map((h, i) => el('th', { text: h, className: i >= numericFrom ? 'num' : '', attrs: { scope: 'col' } })),
      ),
    ]),
    el('tbody', {}, rows),
  ]);
}

/** Replaces all children of `parent`. */
export function replaceChildren(parent: Element, children: (Node | null)[]): void {
  parent.replaceChildren(...children.filter((c): c is Node => c !== null));
}

/** Fills a vscode-single-select with [value, label] options and selects `current` (mirrored in data-value for tests). */
export function fillSelect(
  select: HTMLElement & { value: string },
  options: ReadonlyArray<readonly [string, string]>,
  current: string,
): void {
  replaceChildren(
    select,
    options.map(([value, label]) => {
      const option = document.createElement('vscode-option');
      option.value = value;
      option.textContent = label;
      option.selected = value === current;
      return option;
    }),
  );
  select.value = current;
  select.dataset['value'] = current;
}
