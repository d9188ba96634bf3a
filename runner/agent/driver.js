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
  // Every path the run takes is exercised once, on throwaway targets:
  // under gVisor a first pass costs page faults and trapped syscalls.
  JSON.parse('{"code": "", "args": [], "env": {"K": "V"}}');
  const warm = newModule('[warm]');
  warm._compile('const x = [1, 2].map(String); module.exports = { x };', '[warm]');
  Module.createRequire(path.join(cwd, '[warm]'));
  // The standard streams are created lazily on first use; create them now,
  // and run console's formatting once into a sink.
  void process.stdout;
  void process.stderr;
  const { Writable } = require('stream');
  const sink = new Writable({ write(chunk, encoding, done) { done(); } });
  new console.Console(sink, sink).log('%s %d %o', 'warm', 1, { a: [1] });
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
  // fd 4 carries the exit status back. Reopened through /proc, it is
  // close-on-exec, so no child process inherits it.
  let report = -1;
  try {
    report = fs.openSync('/proc/self/fd/4', 'w');
  } catch (e) {}
  fs.closeSync(4);
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
  // Exit straight after the 'exit' listeners: Node's own environment
  // teardown costs tens of milliseconds under gVisor, and nothing of this
  // sandbox outlives the run to observe it. Listeners the program adds run
  // after this one, so it calls them itself before leaving.
  // An uncaught exception is printed after the 'exit' listeners run, so
  // that exit keeps Node's own path.
  let fatal = false;
  process.on('uncaughtExceptionMonitor', () => { fatal = true; });
  function paddockExit(code) {
    if (fatal) return;
    const listeners = process.listeners('exit');
    for (const fn of listeners.slice(listeners.indexOf(paddockExit) + 1)) {
      fn.call(process, code);
    }
    const status = process.exitCode === undefined ? code : process.exitCode;
    // Close stdout and stderr so that the agent sees them end, then report
    // the status: the run is over from here on.
    for (const fd of [1, 2]) {
      try { fs.closeSync(fd); } catch (e) {}
    }
    if (report >= 0) {
      try { fs.writeSync(report, String(status & 0xff)); } catch (e) {}
    }
    process.reallyExit(status);
  }
  process.on('exit', paddockExit);
  // Node itself calls the compiled module from its tick queue, so neither an
  // uncaught exception's stack nor its source arrow mentions this driver.
  process.nextTick(Module.prototype._compile.bind(m), code, '[eval]');
})();
