/**
 * Keeps a drag's pointer events on `el` while the button is down, so a drag that leaves
 * the canvas still moves the view. A pointer the browser no longer tracks (a synthetic
 * event, a touch already lifted) cannot be captured; the drag then works while over `el`.
 */
export function capture(el: Element, pointerId: number): void {
  try {
    el.setPointerCapture(pointerId);
  } catch {
    // Not an active pointer: nothing to capture.
  }
}

export function release(el: Element, pointerId: number): void {
  if (el.hasPointerCapture(pointerId)) el.releasePointerCapture(pointerId);
}
