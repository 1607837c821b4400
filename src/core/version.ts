/**
 * This package's version, as package.json says it (test/package.test.ts checks the two agree).
 * A constant rather than a read of package.json so `conclave --version` and the server's
 * status need no file access and no JSON import at startup.
 */
export const CONCLAVE_VERSION = '0.1.0';
