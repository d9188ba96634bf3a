// Paddock's Node startup snapshot. The root filesystem of a template whose
// language is node is built with
//   node --snapshot-blob /usr/lib/paddock/node-startup.blob --build-snapshot <this file>
// which runs this file once and keeps the resulting heap: Node's own
// bootstrap (Debian's node has no built-in snapshot and compiles it from
// source at every start) and the built-in modules loaded below. A process
// started with `node --snapshot-blob <blob> -- DRIVER ARGS...` begins from
// that heap and runs the main function below, which compiles DRIVER as a
// CommonJS module in the working directory, with ARGS as process.argv[1...],
// as `node -e DRIVER -- ARGS...` would.
//
// Nothing here may draw a random number or open a descriptor: every
// process started from the blob shares this heap. V8 reseeds Math.random
// when it deserialises a snapshot, and OpenSSL's generator lives outside
// the heap.
'use strict';
for (const id of ['buffer', 'console', 'events', 'fs', 'path', 'stream', 'string_decoder', 'util']) {
  require(id);
}
// module is not on Node's list of modules known to survive a snapshot;
// it is the CommonJS loader, already part of the bootstrap, and taken
// here so that Node warns about it once, now, and not at every start.
const Module = require('module');
const path = require('path');
require('v8').startupSnapshot.setDeserializeMainFunction(() => {
  const driver = process.argv[1];
  process.argv.splice(1, 1);
  const cwd = process.cwd();
  const m = new Module('[driver]');
  m.filename = path.join(cwd, '[driver]');
  m.paths = Module._nodeModulePaths(cwd);
  m._compile(driver, m.filename);
});
