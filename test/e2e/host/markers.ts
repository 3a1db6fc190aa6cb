// Lines the extension-host test entry prints so the runner outside VS Code can follow the run:
// it shows what comes after the start marker and counts results from the result line.
export const startMarker = 'QS_HOST_TESTS_START';
export const resultMarker = 'QS_HOST_TESTS_RESULT';
/** Beside the compiled tests: the order in which workbenches claim them (build-host-tests.ts). */
export const ORDER_FILE = 'order.json';
/** A host test asks the runner for a screenshot of its workbench: the marker, then JSON
 * `{name, done}`; the runner saves test-results/e2e/<workbench>/NN-<name>.png and then creates
 * the file `done` (or `done`.failed with the reason). */
export const screenshotMarker = 'QS_HOST_SCREENSHOT';
