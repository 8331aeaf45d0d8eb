/**
 * The young generation of a thread that reads a whole trace (the CLI's analyze and convert
 * thread, the extension's trace worker), in MB: two semi-spaces of 4 MB and the space for
 * young large objects. V8 lets each semi-space grow to 16 MB, and reading a big trace fills
 * them; the same as `node --max-semi-space-size=4`, which no code can set once the main
 * thread's heap exists. 3 MB promotes objects before they die and costs more memory and CPU,
 * not less (docs/performance.md, "Issue 27, fifth round" and "seventh round").
 */
export const READER_YOUNG_GENERATION_MB = 12;
