// Paddock's one-shot Node driver, started by the agent as
//   node -e <this source> -- <warm-up code>
// It runs the warm-up code, tells the agent it is ready, waits for the
// request on fd 3, then runs the request as `node -e CODE ARGS...` would: a
// CommonJS module named [eval] in the working directory.
'use strict';
(function paddockDriver() {
  const fs = require('fs');
  const path = require('path');
  const Module = require('module');
  const cwd = process.cwd();

  function newModule(name) {
    const m = new Module(name);
    m.filename = path.join(cwd, name);
    m.paths = Module._nodeModulePaths(cwd);
    return m;
  }

  const warmup = process.argv[1] || '';
  if (warmup) {
    newModule('[warmup]')._compile(warmup, '[warmup]');
  }
  // Take the run's first-use costs now, off the hot path.
  JSON.parse('{"code": "", "args": [], "env": {}}');
  newModule('[warm]')._compile('', '[warm]');
  Module.createRequire(path.join(cwd, '[warm]'));
  fs.writeSync(1, '\x00paddock:ready\x00');
  fs.writeSync(2, '\x00paddock:ready\x00');

  const chunks = [];
  const buf = Buffer.alloc(1 << 16);
  for (;;) {
    const n = fs.readSync(3, buf, 0, buf.length, null);
    if (n === 0) break;
    chunks.push(Buffer.from(buf.subarray(0, n)));
  }
  fs.closeSync(3);
  const req = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  const code = req.code;

  Object.assign(process.env, req.env || {});
  process.argv = [process.argv[0], ...(req.args || [])];
  process.execArgv = [];

  const m = newModule('[eval]');
  globalThis.module = m;
  globalThis.exports = m.exports;
  globalThis.require = Module.createRequire(m.filename);
  globalThis.__filename = '[eval]';
  globalThis.__dirname = '.';
  // Node itself calls the compiled module from its tick queue, so neither an
  // uncaught exception's stack nor its source arrow mentions this driver.
  process.nextTick(Module.prototype._compile.bind(m), code, '[eval]');
})();
