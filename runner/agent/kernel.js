// Paddock's Node kernel. The driver (driver.js) evaluates this source when
// the agent asks it to become a kernel and calls the function it yields with
// the request and the driver's require. Cells arrive as frames on fd 3;
// outputs, as Jupyter-shaped events, and the end of each cell leave as
// frames on fd 4 (see driverchan.go).
//
// Cells run as scripts in the main context, so that top-level let, const,
// function and class declarations outlive them, as in node's REPL; a cell
// with top-level await goes through the REPL's own transform. Whatever is
// written to process.stdout and process.stderr (console.log…) becomes
// ordered stream events; child processes keep the real fds 1 and 2, which
// the agent forwards raw. SIGINT interrupts the running cell only.
//
// A cell reads a line of input with the global input(prompt[, {password}]),
// which returns a Promise of the line (await it): the request goes up to
// the front end. Questions about code (complete, inspect, is_complete) are
// answered from the live global scope between the running cell's awaits,
// or after a synchronous cell.
(function paddockKernel(req, require) {
  'use strict';
  const fs = require('fs');
  const net = require('net');
  const path = require('path');
  const util = require('util');
  const vm = require('vm');
  const Module = require('module');
  const { StringDecoder } = require('string_decoder');
  // The REPL's transform for top-level await, loaded (with its parser) by
  // the first cell that may need it; null without --expose-internals.
  let processTopLevelAwait;
  function awaitTransform() {
    if (processTopLevelAwait === undefined) {
      try {
        ({ processTopLevelAwait } = require('internal/repl/await'));
      } catch (e) {
        processTopLevelAwait = null;
      }
    }
    return processTopLevelAwait;
  }
  const importDynamic = vm.constants && vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER;

  const MAX_FRAME = (64 << 20) - 8192;
  const KERNEL_FILE = 'paddock-kernel.js';
  const INTERRUPTED = Symbol('interrupted');

  // Reopened through /proc, the channels are close-on-exec: no child
  // process inherits them.
  function reopen(fd, flags) {
    const n = fs.openSync(`/proc/self/fd/${fd}`, flags);
    fs.closeSync(fd);
    return n;
  }
  const ctlFd = reopen(3, 'r');
  const outFd = reopen(4, 'w');

  let seq = 0; // the current, or last, cell
  let key = ''; // its key, which every frame of it carries
  let running = null; // the running cell: { interrupt() }

  function note(text) {
    return Buffer.from(JSON.stringify({ op: 'event', seq, key, type: 'stream', stream: 'stderr', text: `[paddock: ${text}]\n` }));
  }

  // Every frame is of the current cell and carries its key: the agent
  // drops what lacks it, as frames the cell's code wrote itself.
  function frameOf(msg) {
    if (msg.key === undefined) msg.key = key;
    let body;
    try {
      body = Buffer.from(JSON.stringify(msg), 'utf8');
    } catch (e) {
      body = note(`an output could not be encoded: ${e.message}`);
    }
    if (body.length > MAX_FRAME) body = note(`an output of ${body.length} bytes was dropped: over the frame limit`);
    const frame = Buffer.allocUnsafe(4 + body.length);
    frame.writeUInt32BE(body.length, 0);
    body.copy(frame, 4);
    return frame;
  }

  // send writes the frames of msgs in one write.
  function send(...msgs) {
    const frame = msgs.length === 1 ? frameOf(msgs[0]) : Buffer.concat(msgs.map(frameOf));
    try {
      for (let off = 0; off < frame.length;) off += fs.writeSync(outFd, frame, off);
    } catch (e) {
      process.reallyExit(0); // the agent is gone
    }
  }

  // Every write is sent at once: the cell may block the only thread right
  // after it, so that nothing could send it later.
  function output(stream, text) {
    if (text) send({ op: 'event', seq, type: 'stream', stream, text });
  }

  function capture(stream, name) {
    const decoder = new StringDecoder('utf8');
    stream.write = function write(chunk, encoding, cb) {
      if (typeof encoding === 'function') {
        cb = encoding;
        encoding = undefined;
      }
      let text;
      if (typeof chunk === 'string') {
        text = !encoding || /^utf-?8$/i.test(encoding) ? chunk : decoder.write(Buffer.from(chunk, encoding));
      } else if (ArrayBuffer.isView(chunk)) {
        text = decoder.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      } else {
        text = String(chunk);
      }
      output(name, text);
      if (typeof cb === 'function') process.nextTick(cb);
      return true;
    };
  }

  function inspect(v) {
    try {
      return util.inspect(v);
    } catch (e) {
      return Object.prototype.toString.call(v);
    }
  }

  // The stack without the kernel's frames: they follow the cell's.
  function userStack(stack) {
    let lines = stack.split('\n');
    // An error thrown by the kernel's own globals (display) starts with
    // node's excerpt of the kernel's source: "file:line", the line, a
    // caret and an empty line.
    if (lines.length > 0 && lines[0].startsWith(`${KERNEL_FILE}:`)) {
      const end = lines.indexOf('');
      lines = end < 0 ? lines.slice(1) : lines.slice(end + 1);
    }
    // Its frames inside the kernel come before the cell's own.
    const first = lines.findIndex((l) => /^\s+at /.test(l));
    let userFrame = first;
    while (userFrame >= 0 && userFrame < lines.length && /^\s+at /.test(lines[userFrame]) && lines[userFrame].includes(KERNEL_FILE)) userFrame++;
    if (first >= 0) lines = lines.slice(0, first).concat(lines.slice(userFrame));
    const cut = lines.findIndex((l) => /^\s+at /.test(l) && (l.includes('node:vm') || l.includes(KERNEL_FILE)));
    return (cut < 0 ? lines : lines.slice(0, cut)).filter((l) => !l.includes(KERNEL_FILE));
  }

  function describe(e) {
    try {
      if (e instanceof Error || (e !== null && typeof e === 'object' && typeof e.stack === 'string')) {
        const name = String(e.name === undefined ? 'Error' : e.name);
        const value = String(e.message === undefined ? '' : e.message);
        const stack = typeof e.stack === 'string' && e.stack ? e.stack : `${name}: ${value}`;
        return { name, value, traceback: userStack(stack) };
      }
    } catch (err) {} // an object that throws on every access
    const shown = inspect(e);
    return { name: 'Uncaught', value: shown, traceback: [`Uncaught ${shown}`] };
  }

  function isInterrupt(e) {
    try {
      return e === INTERRUPTED || (e instanceof Error && e.code === 'ERR_SCRIPT_EXECUTION_INTERRUPTED');
    } catch (err) {
      return false;
    }
  }

  function compile(code, filename) {
    const options = { filename };
    if (importDynamic !== undefined) options.importModuleDynamically = importDynamic;
    // Like the REPL, a cell that looks like a block is first tried as an
    // object literal.
    if (/^\s*\{/.test(code) && /\}\s*$/.test(code)) {
      try {
        return { script: new vm.Script(`(${code}\n)`, options), wrapped: false };
      } catch (e) {}
    }
    if (code.includes('await') && awaitTransform() !== null) {
      let wrapped = null;
      try {
        wrapped = processTopLevelAwait(code);
      } catch (e) {} // not valid JavaScript: compiling the cell reports it
      if (wrapped !== null) return { script: new vm.Script(wrapped, options), wrapped: true };
    }
    return { script: new vm.Script(code, options), wrapped: false };
  }

  async function runCell(msg) {
    seq = msg.seq;
    key = String(msg.key || '');
    const early = interrupts.has(msg.seq);
    interrupts.clear(); // any other is of a cell that is over
    if (early) {
      send({ op: 'done', seq: msg.seq, status: 'interrupted', error: null });
      return;
    }
    if (msg.env) Object.assign(process.env, msg.env);
    stdinAllowed = msg.stdin === true;
    let status = 'ok';
    let error = null;
    let last = null; // the result or the error, sent with the end
    let interrupt;
    const interrupted = new Promise((resolve, reject) => {
      interrupt = () => reject(INTERRUPTED);
    });
    interrupted.catch(() => {});
    running = { seq: msg.seq, interrupt };
    try {
      const { script, wrapped } = compile(String(msg.code || ''), `[cell-${msg.count}]`);
      let value = script.runInThisContext({ breakOnSigint: true });
      if (wrapped) {
        const r = await Promise.race([value, interrupted]);
        value = r === undefined ? undefined : r.value;
      }
      if (value !== undefined) {
        last = { op: 'event', seq, type: 'execute_result', data: { 'text/plain': util.inspect(value) }, metadata: {} };
      }
    } catch (e) {
      if (isInterrupt(e)) {
        status = 'interrupted';
      } else {
        status = 'error';
        error = describe(e);
        last = { op: 'event', seq, type: 'error', error };
      }
    }
    running = null;
    stdinAllowed = false;
    inputWait = null; // a read the cell did not wait for is never answered
    inputQueue.length = 0;
    const done = { op: 'done', seq: msg.seq, status, error };
    if (last !== null) send(last, done);
    else send(done);
  }

  // Cells run one after the other, in the order they arrive.
  const queue = [];
  let busy = false;
  async function drain() {
    if (busy) return;
    busy = true;
    while (queue.length > 0) {
      const msg = queue.shift();
      if (msg.op === 'execute') await runCell(msg);
    }
    busy = false;
  }

  // The agent interrupts a cell with SIGINT and with a message, which
  // reaches an awaited cell even when node's vm has swallowed the signal,
  // and a cell that has not started yet.
  const interrupts = new Set();
  function interruptCell(cellSeq) {
    if (running !== null && running.seq === cellSeq) running.interrupt();
    else interrupts.add(cellSeq);
  }

  let pending = Buffer.alloc(0);
  function receive(chunk) {
    pending = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
    while (pending.length >= 4) {
      const n = pending.readUInt32BE(0);
      if (pending.length < 4 + n) break;
      const msg = JSON.parse(pending.toString('utf8', 4, 4 + n));
      pending = pending.subarray(4 + n);
      if (msg.op === 'interrupt') interruptCell(msg.seq);
      else if (msg.op === 'input_reply') onInputReply(msg);
      else if (msg.op === 'complete' || msg.op === 'inspect' || msg.op === 'is_complete') answer(msg);
      else queue.push(msg);
    }
    drain();
  }

  // Input: one request at a time goes up; the others wait their turn.
  const STDIN_REFUSED = 'raw_input was called, but this frontend does not support input requests.';
  let stdinAllowed = false;
  let inputWait = null; // the read whose request is up: { seq, resolve, reject }
  const inputQueue = [];
  function inputError(name, message) {
    const e = new Error(message);
    e.name = name;
    return e;
  }
  function input(prompt = '', options = undefined) {
    return new Promise((resolve, reject) => {
      if (running === null) {
        reject(inputError('EOFError', 'input() outside a running cell'));
      } else if (!stdinAllowed) {
        reject(inputError('StdinNotImplementedError', STDIN_REFUSED));
      } else {
        const password = options !== null && typeof options === 'object' && options.password === true;
        inputQueue.push({ seq, prompt: String(prompt), password, resolve, reject });
        nextInput();
      }
    });
  }
  function nextInput() {
    if (inputWait !== null || inputQueue.length === 0) return;
    inputWait = inputQueue.shift();
    send({ op: 'input', seq: inputWait.seq, prompt: inputWait.prompt, password: inputWait.password });
  }
  function onInputReply(msg) {
    const w = inputWait;
    if (w === null || w.seq !== msg.seq) return;
    inputWait = null;
    if (msg.error === STDIN_REFUSED) w.reject(inputError('StdinNotImplementedError', msg.error));
    else if (msg.error) w.reject(inputError('EOFError', String(msg.error)));
    else w.resolve(String(msg.value === undefined ? '' : msg.value));
    nextInput();
  }
  globalThis.input = input;

  // display(value) shows a value as an output of the running cell
  // (display_data) without ending it: its inspected text, or the MIME
  // bundle its [Symbol.for('Jupyter.display')]() method returns.
  // display(bundle, { raw: true }) shows a bundle as given, such as
  // { 'text/html': '<b>hi</b>', 'text/plain': 'hi' }. display.html,
  // .markdown, .svg, .text, .json, .png and .jpeg make a bundle of one type
  // (the images take base64 text or a Buffer).
  const DISPLAY = Symbol.for('Jupyter.display');
  function isJSONType(mime) {
    return mime === 'application/json' || mime.endsWith('+json');
  }
  function checkedBundle(bundle) {
    if (bundle === null || typeof bundle !== 'object' || Array.isArray(bundle)) {
      throw new TypeError('display: a raw bundle is an object of MIME type to content');
    }
    const data = {};
    for (const [mime, content] of Object.entries(bundle)) {
      if (!mime.includes('/')) throw new TypeError(`display: ${JSON.stringify(mime)} is not a MIME type`);
      if (typeof content !== 'string' && !isJSONType(mime)) {
        throw new TypeError(`display: the content of ${mime} must be a string`);
      }
      data[mime] = content;
    }
    if (Object.keys(data).length === 0) throw new TypeError('display: the bundle is empty');
    return data;
  }
  function display(value, options) {
    let data;
    if (options !== undefined && options !== null && options.raw === true) data = checkedBundle(value);
    else if (value !== null && value !== undefined && typeof value[DISPLAY] === 'function') data = checkedBundle(value[DISPLAY]());
    else data = { 'text/plain': util.inspect(value) };
    send({ op: 'event', seq, type: 'display_data', data, metadata: {} });
  }
  function textOf(kind, value) {
    if (typeof value !== 'string') throw new TypeError(`display.${kind}: takes a string`);
    return value;
  }
  function imageOf(kind, value) {
    if (Buffer.isBuffer(value) || value instanceof Uint8Array) return Buffer.from(value).toString('base64');
    if (typeof value !== 'string') throw new TypeError(`display.${kind}: takes base64 text or a Buffer`);
    return value;
  }
  display.html = (s) => display({ 'text/html': textOf('html', s) }, { raw: true });
  display.markdown = (s) => display({ 'text/markdown': textOf('markdown', s) }, { raw: true });
  display.svg = (s) => display({ 'image/svg+xml': textOf('svg', s) }, { raw: true });
  display.text = (s) => display({ 'text/plain': textOf('text', s) }, { raw: true });
  display.json = (v) => display({ 'application/json': v, 'text/plain': util.inspect(v) }, { raw: true });
  display.png = (b) => display({ 'image/png': imageOf('png', b) }, { raw: true });
  display.jpeg = (b) => display({ 'image/jpeg': imageOf('jpeg', b) }, { raw: true });
  globalThis.display = display;

  const introspect = require('vm').runInThisContext(req.introspect, { filename: KERNEL_FILE })(require);
  function answer(msg) {
    let ans = null;
    try {
      ans = introspect(msg);
      JSON.stringify(ans);
    } catch (e) {
      ans = null;
    }
    send({ op: 'answer', rid: msg.rid, key: String(msg.key || ''), answer: ans });
  }

  Object.assign(process.env, req.env || {});
  process.argv = [process.argv[0]];
  process.execArgv = [];
  const cwd = process.cwd();
  const replModule = new Module('<repl>');
  replModule.filename = path.join(cwd, '<repl>');
  replModule.paths = Module._nodeModulePaths(cwd);
  globalThis.module = replModule;
  globalThis.exports = replModule.exports;
  globalThis.require = Module.createRequire(replModule.filename);
  delete globalThis.__filename;
  delete globalThis.__dirname;
  capture(process.stdout, 'stdout');
  capture(process.stderr, 'stderr');
  // SIGINT stops a running script while a vm watchdog is armed. One armed
  // for the kernel's whole life (as node's REPL arms one) means SIGINT never
  // kills the kernel: with a process listener instead, node's vm would put
  // the default action back around every script. Outside a script the
  // signal is dropped; the agent's message stops an awaited cell.
  let armed = false;
  try {
    armed = process.binding('contextify').startSigintWatchdog() === true;
  } catch (e) {} // no such binding: a listener, and its gaps
  if (!armed) {
    process.on('SIGINT', () => {
      if (running !== null) running.interrupt();
    });
  }
  // As in the REPL, an error no cell catches is reported and the kernel
  // lives on.
  process.on('uncaughtException', (e) => {
    const d = describe(e);
    output('stderr', `${d.name === 'Uncaught' ? '' : 'Uncaught '}${d.traceback.join('\n')}\n`);
  });
  const quit = () => process.reallyExit(0);
  const ctl = new net.Socket({ fd: ctlFd, readable: true, writable: false });
  ctl.on('data', receive);
  ctl.on('end', quit);
  ctl.on('error', quit);
  send({ op: 'ready' });
})
