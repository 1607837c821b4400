/**
 * The `conclave` command run from source through tsx: real-process CLI tests spawn this
 * (`node --import tsx test/cli/conclave-from-source.ts ARGS...`), so they test the code as it
 * is now, without a build. Not a test file itself.
 */
import { runCli } from '../../src/cli/main.js';

process.exitCode = await runCli(process.argv.slice(2));
