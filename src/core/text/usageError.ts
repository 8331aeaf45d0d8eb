/** A command line the CLI cannot run: printed with a pointer to the help, exit status 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    /** The command whose --help explains the mistake. */
    readonly helpCommand = 'agent-trace --help',
  ) {
    super(message);
  }
}
