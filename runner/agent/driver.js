// Paddock's Node driver, started by the agent as
//   node --expose-internals -e <this source> -- <warm-up code>
// or, from the image's startup snapshot, whose main function compiles it
// as a module (templates/node_startup.js), as
//   node --expose-internals --snapshot-blob <blob> -- <this source> <warm-up code>
// It runs the warm-up code, tells the agent it is ready, waits for the
// request on fd 3, then runs the request as `node -e CODE ARGS...` would: a
// CommonJS module named [eval] in the working directory. Asked to become a
// kernel, it runs the kernel the request carries (kernel.js) instead. See
// driverchan.go for the frames on fds 3 and 4.
'use strict';
(function paddockDriver() {
  const fs = require('fs');
  const path = require('path');
  const Module = require('module');
  const cwd = process.cwd();
  // Started from the image's startup snapshot (startup.go), node has not
  // set up what `node -e` gives code: the built-in modules as globals.
  // And console.Console does not survive the snapshot. Put both back.
  if (!Object.getOwnPropertyDescriptor(globalThis, 'fs')) {
    require('internal/modules/helpers').addBuiltinLibsToObject(globalThis, '<eval>');
  }
  if (typeof console.Console !== 'function') {
    console.Console = require('internal/console/constructor').Console;
  }

  function newModule(name) {
    const m = new Module(name);
    m.filename = path.join(cwd, name);
    m.paths = Module._nodeModulePaths(cwd);
    return m;
  }

  // Exactly n bytes of fd 3.
  function readExact(n) {
    const b = Buffer.alloc(n);
    for (let off = 0; off < n;) {
      const got = fs.readSync(3, b, off, n - off, null);
      if (got === 0) throw new Error('request channel closed');
      off += got;
    }
    return b;
  }

  const warmup = process.argv[1] || '';
  if (warmup) {
    newModule('[warmup]')._compile(warmup, '[warmup]');
  }
  // Take the run's first-use costs now, off the hot path.
  // Every path the run takes is exercised once, on throwaway targets:
  // under gVisor a first pass costs page faults and trapped syscalls.
  JSON.parse('{"op": "run", "code": "", "args": [], "env": {"K": "V"}}');
  const warmFrame = Buffer.alloc(8);
  warmFrame.writeUInt32BE(warmFrame.readUInt32BE(4), 0);
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

  // The request is one frame on fd 3: a 4-byte big-endian length, then
  // that much JSON.
  const req = JSON.parse(readExact(readExact(4).readUInt32BE(0)).toString('utf8'));
  if (req.op === 'kernel') {
    // Become a kernel: the agent sends the kernel's code along.
    require('vm').runInThisContext(req.source, { filename: 'paddock-kernel.js' })(req, require);
    return;
  }
  // fd 4 carries the hint below and fd 3 its acknowledgement. Reopened
  // through /proc, they are close-on-exec, so no child process inherits
  // them.
  let report = -1;
  let ack = -1;
  try {
    report = fs.openSync('/proc/self/fd/4', 'w');
    ack = fs.openSync('/proc/self/fd/3', 'r');
  } catch (e) {}
  fs.closeSync(3);
  fs.closeSync(4);
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
  process.on('uncaughtExceptionMonitor', (err) => {
    fatal = true;
    hint(err);
  });
  // Tell the agent which limit the program is dying of, if any: an
  // uncaught ENOSPC (disk), or an uncaught EAGAIN from starting a process
  // (processes). It is a hint only: the agent names the limit in the run's
  // reason only if its own reading finds the limit at its ceiling, and the
  // exit status is always the process's own.
  function hint(err) {
    let limit = '';
    if (err && err.code === 'ENOSPC') {
      limit = 'disk';
    } else if (err && err.code === 'EAGAIN' && typeof err.syscall === 'string' && err.syscall.startsWith('spawn')) {
      limit = 'processes';
    }
    if (!limit || report < 0) return;
    const body = Buffer.from(`{"op":"limit","limit":"${limit}"}`);
    const frame = Buffer.alloc(4 + body.length);
    frame.writeUInt32BE(body.length, 0);
    body.copy(frame, 4);
    try {
      fs.writeSync(report, frame);
      // Stay as the error left things until the agent has read the
      // limits: exiting would end this process's threads.
      if (ack >= 0) fs.readSync(ack, Buffer.alloc(1), 0, 1, null);
    } catch (e) {}
  }
  function paddockExit(code) {
    if (fatal) return;
    const listeners = process.listeners('exit');
    for (const fn of listeners.slice(listeners.indexOf(paddockExit) + 1)) {
      fn.call(process, code);
    }
    const status = process.exitCode === undefined ? code : process.exitCode;
    // Close stdout and stderr so that the agent sees them end. The agent
    // takes the status from the process's exit itself.
    for (const fd of [1, 2]) {
      try { fs.closeSync(fd); } catch (e) {}
    }
    process.reallyExit(status);
  }
  process.on('exit', paddockExit);
  // Node itself calls the compiled module from its tick queue, so neither an
  // uncaught exception's stack nor its source arrow mentions this driver.
  process.nextTick(Module.prototype._compile.bind(m), code, '[eval]');
})();
