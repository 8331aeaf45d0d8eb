import { version } from '../../package.json';

/** The CLI's version is the package's: one number to bump. */
export const VERSION = version;
