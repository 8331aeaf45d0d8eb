/**
 * The young generation of a thread that reads a whole trace (the CLI's analyze and convert
 * thread, the extension's trace worker), in MB: two semi-spaces of 4 MB and the space for
 * young large objects. V8 lets each semi-space grow to 16 MB, and reading a big trace fills
 * them; the same as `node --max-semi-space-size=4`, which no code can set once the main
 * thread's heap exists. 3 MB promotes objects before they die and costs more memory and CPU,
 * not less (docs/performance.md, "Issue 27, fifth round" and "seventh round").
 */
export const READER_YOUNG_GENERATION_MB = 12;

/**
 * The young generation of an export thread (`export --to parquet`), in MB: two semi-spaces of
 * 32 MB and the space for young large objects. Each thread parses a trace, builds its rows and
 * writes its Parquet files, and keeps up to eight sources' rows waiting for the redactor: with
 * V8's own 16 MB semi-spaces more of that short-lived work survived into the old generation.
 * The export is a job of its own in the CLI, not a thread beside the editor, so it may take the
 * memory (about 90 MB more at its peak) for the CPU; the session index's parse threads, which
 * run in the extension host, keep V8's own (docs/performance.md, "Issue 30, eighteenth session").
 */
export const EXPORT_YOUNG_GENERATION_MB = 96;
