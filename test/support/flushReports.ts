// Loaded into every test file's process with `--import` (test/suite.sh): a file's runner sends
// its verdicts to the parent over stdout, and `--test-force-exit` ends the process as soon as its
// tests are done. Writes to a pipe are asynchronous in Node, so the last verdicts could still be
// queued then and were lost: the suite's count varied (504–514 of 514 unit tests) and a failure
// among them would have been reported as the file's bare "test failed", without its name
// (nodejs/node#64833). Blocking writes flush each verdict before the exit can happen.
type Blockable = { setBlocking?: (blocking: boolean) => void };
(process.stdout as unknown as { _handle?: Blockable })._handle?.setBlocking?.(true);
