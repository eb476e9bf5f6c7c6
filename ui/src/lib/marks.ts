// Timing marks the speed script reads (`scripts/measure-desktop`): wall-clock milliseconds
// (performance.timeOrigin + performance.now()) of the first time something was on screen.
declare global {
  interface Window {
    __switchyardMarks?: Record<string, number>;
  }
}

/** Records `name` once, after the next frame is painted. */
export function markPaintOnce(name: string): void {
  if (typeof window === 'undefined' || typeof requestAnimationFrame !== 'function') return;
  const marks = (window.__switchyardMarks ??= {});
  if (name in marks) return;
  marks[name] = -1;
  requestAnimationFrame(() => {
    // The frame after the one that includes the change: it has been painted.
    setTimeout(() => (marks[name] = performance.timeOrigin + performance.now()), 0);
  });
}
