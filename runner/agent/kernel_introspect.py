# Questions about code for Paddock's Python kernel: completion, inspection
# and the completeness check (Jupyter's complete, inspect and is_complete
# requests). The agent sends this file after kernel.py and
# kernel_display.py, as one source; the answering thread of kernel.py calls
# answer() with each question and it answers from the live namespace of the
# user, without running the code. Cursor positions are offsets in code
# points, which Python's strings index directly.

ASK_OPS = ('complete', 'inspect', 'is_complete', 'reseed')
SOURCE_LIMIT = 64 << 10  # characters of source shown by inspect


def answer(msg):
    op = msg.get('op')
    code = str(msg.get('code') or '')
    pos = min(max(int(msg.get('cursor_pos') or 0), 0), len(code))
    try:
        if op == 'reseed':
            # A sandbox forked from another's image: fresh random state.
            reseed_clone()
            ans = {'status': 'reseeded'}
        elif op == 'complete':
            ans = complete(code, pos)
        elif op == 'inspect':
            ans = inspect_object(code, pos, int(msg.get('detail_level') or 0))
        else:
            ans = is_complete(code)
        ans = jsonable(ans, None)
    except BaseException:
        ans = None
    send({'op': 'answer', 'rid': msg.get('rid', 0), 'key': str(msg.get('key', '')), 'answer': ans})


def namespaces():
    return (user.__dict__, builtins.__dict__)


def lookup(dotted):
    # The object a dotted name names, by attribute access only (nothing is
    # called but the attributes' own getters); (found, object).
    parts = dotted.split('.')
    if not all(p.isidentifier() for p in parts):
        return False, None
    for ns in namespaces():
        if parts[0] in ns:
            obj = ns[parts[0]]
            break
    else:
        return False, None
    for p in parts[1:]:
        try:
            obj = getattr(obj, p)
        except Exception:
            return False, None
    return True, obj


def visible(names, prefix):
    # names that start with prefix; private ones only when asked for.
    return sorted({n for n in names if isinstance(n, str) and n.startswith(prefix)
                   and (prefix.startswith('_') or not n.startswith('_'))})


def complete(code, pos):
    import re
    line = code[:pos].rsplit('\n', 1)[-1]
    m = re.match(r'\s*(?:import\s+(?:[\w.]+(?:\s+as\s+\w+)?\s*,\s*)*|from\s+)([\w.]*)$', line)
    if m:
        text = m.group(1)
        matches = module_matches(text)
    else:
        m = re.match(r'\s*from\s+([\w.]+)\s+import\s+(?:\w+(?:\s+as\s+\w+)?\s*,\s*)*(\w*)$', line)
        if m:
            text = m.group(2)
            matches = from_import_matches(m.group(1), text)
        else:
            text = re.search(r'[\w.]*$', line).group(0)
            matches, text = name_matches(text)
    return {'matches': matches, 'cursor_start': pos - len(text), 'cursor_end': pos, 'metadata': {}}


def name_matches(text):
    # Completions of a name or of the attribute after an object's dotted
    # name, and the part of text they replace.
    import keyword
    if '.' in text:
        base, prefix = text.rsplit('.', 1)
        found, obj = lookup(base)
        if not found:
            return [], prefix
        try:
            names = dir(obj)
        except Exception:
            names = []
        return visible(names, prefix), prefix
    names = set(keyword.kwlist)
    for ns in namespaces():
        names.update(ns)
    return visible(names, text), text


def module_matches(text):
    # Modules that may be imported by the dotted name text.
    import pkgutil
    if '.' not in text:
        return visible(top_modules(), text)
    base, prefix = text.rsplit('.', 1)
    mod = sys.modules.get(base)
    if mod is None:
        try:
            import importlib
            mod = importlib.import_module(base)
        except BaseException:
            return []
    names = set()
    if hasattr(mod, '__path__'):
        names.update(m.name for m in pkgutil.iter_modules(mod.__path__))
    names.update(n for n, v in vars(mod).items() if isinstance(v, type(sys)))
    return [base + '.' + n for n in visible(names, prefix)]


module_cache = [None, frozenset()]  # the key of the search path it was read at, the names


def top_modules():
    # The top-level modules on the search path, read again only when the
    # path or one of its directories has changed.
    import pkgutil
    key = []
    for p in sys.path:
        try:
            key.append((p, os.stat(p or '.').st_mtime_ns))
        except OSError:
            key.append((p, None))
    key = tuple(key)
    if module_cache[0] != key:
        names = set(sys.builtin_module_names)
        names.update(m.name for m in pkgutil.iter_modules())
        module_cache[:] = [key, frozenset(names)]
    return module_cache[1]


def from_import_matches(modname, prefix):
    # Names that "from modname import" may take.
    import importlib
    import pkgutil
    try:
        mod = sys.modules.get(modname) or importlib.import_module(modname)
    except BaseException:
        return []
    names = set(dir(mod))
    if hasattr(mod, '__path__'):
        names.update(m.name for m in pkgutil.iter_modules(mod.__path__))
    return visible(names, prefix)


def name_at(code, pos):
    # The dotted name the cursor touches or, failing that, the name of the
    # call the cursor is in: the object inspect describes.
    import re
    left = re.search(r'[\w.]*$', code[:pos]).group(0)
    right = re.match(r'\w*', code[pos:]).group(0)
    name = (left + right).strip('.')
    if name and lookup(name)[0]:
        return name
    depth = 0
    for i in range(pos - 1, -1, -1):
        c = code[i]
        if c == ')':
            depth += 1
        elif c == '(':
            if depth == 0:
                call = re.search(r'[\w.]*$', code[:i]).group(0).strip('.')
                return call or name
            depth -= 1
    return name


def inspect_object(code, pos, level):
    import inspect
    name = name_at(code, pos)
    found, obj = lookup(name) if name else (False, None)
    if not found:
        return {'found': False, 'data': {}, 'metadata': {}}
    lines = []
    if callable(obj):
        try:
            sig = str(inspect.signature(obj))
        except (TypeError, ValueError):
            sig = None
        if sig is not None:
            label = 'Init signature' if isinstance(obj, type) else 'Signature'
            lines.append('%s: %s%s' % (label, name, sig))
    else:
        try:
            shown = repr(obj)
        except Exception:
            shown = '<unprintable %s object>' % type(obj).__name__
        if len(shown) > 200:
            shown = shown[:200] + '...'
        lines.append('String form: %s' % shown)
    doc = inspect.getdoc(obj)
    if not doc:
        lines.append('Docstring: <no docstring>')
    elif '\n' in doc:
        lines.append('Docstring:\n' + doc)
    else:
        lines.append('Docstring: ' + doc)
    if level >= 1:
        try:
            source = inspect.getsource(obj)
        except (TypeError, OSError):
            source = None
        if source:
            lines.append('Source:\n' + source[:SOURCE_LIMIT].rstrip('\n'))
    try:
        lines.append('File: %s' % inspect.getfile(obj))
    except TypeError:
        pass
    lines.append('Type: %s' % type(obj).__name__)
    return {'found': True, 'data': {'text/plain': '\n'.join(lines)}, 'metadata': {}}


def is_complete(code):
    # complete, incomplete (with the next line's indent) or invalid, as a
    # console decides whether to run what was typed or ask for more.
    import codeop
    if not code.strip():
        return {'status': 'complete'}
    try:
        compile(code, '<input>', 'exec', COMPILE_FLAGS, dont_inherit=True)
    except SyntaxError:
        pass
    else:
        # A block's body may go on until a blank line ends it.
        last = code.rsplit('\n', 1)[-1]
        if last.strip() and last[:1] in ' \t':
            return {'status': 'incomplete', 'indent': last[:len(last) - len(last.lstrip())]}
        return {'status': 'complete'}
    try:
        if codeop.compile_command(code, '<input>', 'exec') is not None:
            return {'status': 'complete'}
    except (SyntaxError, OverflowError, ValueError):
        return {'status': 'invalid'}
    last = code.rstrip('\n').rsplit('\n', 1)[-1]
    indent = last[:len(last) - len(last.lstrip())]
    if last.rstrip().endswith(':'):
        indent += '    '
    return {'status': 'incomplete', 'indent': indent}
