// Questions about code for Paddock's Node kernel: completion, inspection
// and the completeness check (Jupyter's complete, inspect and is_complete
// requests). The agent sends this source with the kernel's; the kernel
// evaluates it to the function below and calls what it returns with each
// question. Answers come from the live global scope (the global object and
// the cells' top-level let, const and class names) without running the
// code: a dotted name is resolved by property reads only. Cursor positions
// count code points; JavaScript strings count UTF-16 units.
(function paddockIntrospect(require) {
  'use strict';
  const util = require('util');
  const vm = require('vm');

  const KEYWORDS = ('await break case catch class const continue debugger default delete do else export extends ' +
    'false finally for function if import in instanceof let new null return super switch this throw true try ' +
    'typeof undefined var void while with yield async of').split(' ');
  const NAME = /^[A-Za-z_$][\w$]*$/;
  const SHOWN = 2000; // characters of a value shown by inspect

  // The cells' top-level lexical names (let, const, class), which are not
  // properties of the global object: asked of V8 through the inspector.
  let session;
  function lexicalNames() {
    let names = [];
    try {
      if (session === undefined) {
        const { Session } = require('inspector');
        session = new Session();
        session.connect();
      }
      session.post('Runtime.globalLexicalScopeNames', {}, (err, res) => {
        if (!err && res && Array.isArray(res.names)) names = res.names;
      });
    } catch (e) {
      session = null;
    }
    return names;
  }

  function unitIndex(s, cp) {
    let i = 0;
    for (let n = 0; n < cp && i < s.length; n++) i += s.codePointAt(i) > 0xffff ? 2 : 1;
    return i;
  }
  const points = (s) => [...s].length;

  // The value a dotted name names: { found, value }.
  function lookup(dotted) {
    const parts = dotted.split('.');
    if (!parts.every((p) => NAME.test(p))) return { found: false };
    let value;
    try {
      value = vm.runInThisContext(parts[0]); // a global, or a cell's lexical name
      for (const p of parts.slice(1)) {
        if (value === null || value === undefined) return { found: false };
        if (!(p in Object(value))) return { found: false };
        value = value[p];
      }
    } catch (e) {
      return { found: false };
    }
    return { found: true, value };
  }

  function propertyNames(value) {
    const names = new Set();
    for (let o = Object(value); o !== null; o = Object.getPrototypeOf(o)) {
      for (const n of Object.getOwnPropertyNames(o)) names.add(n);
    }
    return names;
  }

  function matching(names, prefix) {
    return [...new Set(names)].filter((n) => NAME.test(n) && n.startsWith(prefix) && n !== 'constructor').sort();
  }

  function complete(code, pos) {
    const before = code.slice(0, unitIndex(code, pos));
    const member = /([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\.([\w$]*)$/.exec(before);
    let prefix;
    let matches = [];
    if (member !== null) {
      prefix = member[2];
      const r = lookup(member[1]);
      if (r.found && r.value !== null && r.value !== undefined) matches = matching(propertyNames(r.value), prefix);
    } else {
      prefix = (/[A-Za-z_$][\w$]*$/.exec(before) || [''])[0];
      matches = matching([...KEYWORDS, ...lexicalNames(), ...propertyNames(globalThis)], prefix);
    }
    return { matches, cursor_start: pos - points(prefix), cursor_end: pos, metadata: {} };
  }

  // The dotted name the cursor touches or, failing that, the name of the
  // call the cursor is in.
  function nameAt(code, pos) {
    const at = unitIndex(code, pos);
    const left = (/[\w$.]*$/.exec(code.slice(0, at)) || [''])[0];
    const right = (/^[\w$]*/.exec(code.slice(at)) || [''])[0];
    const name = (left + right).replace(/^\.+|\.+$/g, '');
    if (name && lookup(name).found) return name;
    let depth = 0;
    for (let i = at - 1; i >= 0; i--) {
      if (code[i] === ')') depth++;
      else if (code[i] === '(') {
        if (depth === 0) return (/[\w$.]*$/.exec(code.slice(0, i)) || [''])[0].replace(/^\.+|\.+$/g, '') || name;
        depth--;
      }
    }
    return name;
  }

  function typeName(v) {
    if (v === null) return 'null';
    if (typeof v !== 'object') return typeof v;
    try {
      const c = Object.getPrototypeOf(v);
      return c && c.constructor && c.constructor.name ? c.constructor.name : 'Object';
    } catch (e) {
      return 'object';
    }
  }

  function cut(text) {
    return text.length > SHOWN ? `${text.slice(0, SHOWN)}...` : text;
  }

  function inspect(code, pos, level) {
    const name = nameAt(code, pos);
    const r = name ? lookup(name) : { found: false };
    if (!r.found) return { found: false, data: {}, metadata: {} };
    const v = r.value;
    const lines = [`Type: ${typeName(v)}`];
    if (typeof v === 'function') {
      let source = '';
      try {
        source = Function.prototype.toString.call(v);
      } catch (e) {}
      const head = source.split('\n')[0].replace(/\s*\{.*$/, '');
      lines.push(`Signature: ${head || name}`);
      if (level >= 1 && source) lines.push(`Source:\n${cut(source)}`);
    } else {
      let shown;
      try {
        shown = util.inspect(v, { depth: level >= 1 ? 4 : 1 });
      } catch (e) {
        shown = Object.prototype.toString.call(v);
      }
      lines.push(`Value: ${cut(shown)}`);
    }
    return { found: true, data: { 'text/plain': lines.join('\n') }, metadata: {} };
  }

  // The acorn parser node ships (and its REPL uses), or null.
  let acorn;
  function parser() {
    if (acorn === undefined) {
      try {
        acorn = require('internal/deps/acorn/acorn/dist/acorn');
      } catch (e) {
        acorn = null;
      }
    }
    return acorn;
  }

  function isComplete(code) {
    if (code.trim() === '') return { status: 'complete' };
    const last = code.replace(/\n+$/, '').split('\n').pop();
    let indent = /^\s*/.exec(last)[0];
    if (/[{([]\s*$/.test(last)) indent += '  ';
    const a = parser();
    if (a !== null) {
      try {
        a.parse(code, { ecmaVersion: 'latest', allowAwaitOutsideFunction: true, allowHashBang: true });
        return { status: 'complete' };
      } catch (e) {
        // An error at the end of the input is one more lines may fix.
        const atEnd = typeof e.pos === 'number' && e.pos >= code.length;
        if (/^Unterminated (template|comment)/.test(e.message) || (atEnd && !/^Unterminated string/.test(e.message))) {
          return { status: 'incomplete', indent };
        }
        return { status: 'invalid' };
      }
    }
    try {
      new vm.Script(code);
      return { status: 'complete' };
    } catch (e) {
      if (/^(Unexpected end of input|Unterminated template literal)/.test(e.message)) return { status: 'incomplete', indent };
      return { status: e instanceof SyntaxError ? 'invalid' : 'unknown' };
    }
  }

  return function introspect(msg) {
    const code = String(msg.code || '');
    const pos = Math.min(Math.max(Number(msg.cursor_pos) || 0, 0), points(code));
    switch (msg.op) {
      case 'complete':
        return complete(code, pos);
      case 'inspect':
        return inspect(code, pos, Number(msg.detail_level) || 0);
      default:
        return isComplete(code);
    }
  };
})
