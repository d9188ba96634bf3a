# Rich output of Paddock's Python kernel: the agent sends this file after
# kernel.py, as one source: they share one namespace, and this file uses
# kernel.py's imports and helpers.
#
# Objects become MIME bundles as IPython's formatters build them (_repr_*_
# methods, _repr_mimebundle_); display() is a builtin; IPython.display's
# display(), update_display(), clear_output() and DisplayHandle are these
# ones (display_id=True and .update() give update_display_data events); matplotlib figures still open at the end of a cell
# (or at plt.show()) become PNG images and are closed, as with matplotlib's
# inline backend.

REPRS = (
    ('_repr_html_', 'text/html'),
    ('_repr_markdown_', 'text/markdown'),
    ('_repr_svg_', 'image/svg+xml'),
    ('_repr_png_', 'image/png'),
    ('_repr_jpeg_', 'image/jpeg'),
    ('_repr_latex_', 'text/latex'),
    ('_repr_json_', 'application/json'),
    ('_repr_javascript_', 'application/javascript'),
    ('_repr_pdf_', 'application/pdf'),
)
BINARY = ('image/png', 'image/jpeg', 'application/pdf')


def repr_method(obj, name):
    # obj's own method name; never one of a class, or of an object whose
    # __getattr__ answers any name.
    if isinstance(obj, type):
        return None
    try:
        if getattr(obj, '_paddock_no_such_method_', None) is not None:
            return None
        m = getattr(obj, name, None)
    except Exception:
        return None
    return m if callable(m) else None


PLAIN = frozenset((int, float, complex, bool, str, bytes, type(None), list, tuple, dict, set, frozenset, range))


def bundle(obj, include=None, exclude=None):
    # The MIME bundle and metadata of obj, as IPython's formatters build them.
    if type(obj) in PLAIN and not include and not exclude:
        return {'text/plain': repr(obj)}, {}
    data, meta = {}, {}
    m = repr_method(obj, '_repr_mimebundle_')
    if m is not None:
        try:
            r = m(include=include, exclude=exclude)
        except Exception:
            r = None
        if isinstance(r, tuple) and len(r) == 2:
            r, md = r
            if isinstance(md, dict):
                meta.update(md)
        if isinstance(r, dict):
            data.update(r)
    for name, mime in REPRS:
        if mime in data:
            continue
        m = repr_method(obj, name)
        if m is None:
            continue
        try:
            r = m()
        except Exception:
            continue
        if isinstance(r, tuple) and len(r) == 2:
            r, md = r
            if md is not None:
                meta[mime] = md
        if r is not None:
            data[mime] = r
    if 'text/plain' not in data:
        data['text/plain'] = repr(obj)
    return clean(data, include, exclude), jsonable(meta, {})


def clean(data, include=None, exclude=None):
    # data with every value as JSON can carry it: binary as base64.
    out = {}
    for mime, v in data.items():
        if not isinstance(mime, str) or (include and mime not in include) or (exclude and mime in exclude):
            continue
        if isinstance(v, (bytes, bytearray, memoryview)):
            if mime in BINARY or mime.startswith('image/'):
                v = binascii.b2a_base64(v, newline=False).decode('ascii')
            else:
                v = bytes(v).decode('utf-8', 'replace')
        elif mime == 'application/json' or mime.endswith('+json'):
            if isinstance(v, str):
                try:
                    v = json.loads(v)
                except ValueError:
                    continue
            v = jsonable(v, None)
            if v is None:
                continue
        elif not isinstance(v, str):
            v = str(v)
        out[mime] = v
    return out


def jsonable(v, default):
    try:
        json.dumps(v, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return default
    return v


def emit(kind, data, meta, hold=False, transient=None):
    msg = {'op': 'event', 'seq': st.seq, 'type': kind, 'data': data, 'metadata': meta}
    if transient:
        msg['transient'] = transient
    output.emit(msg, hold)


def new_display_id():
    return binascii.hexlify(os.urandom(16)).decode('ascii')


class DisplayHandle:
    """A display that can be shown again or updated in place."""

    def __init__(self, display_id=None):
        self.display_id = new_display_id() if display_id is None else display_id

    def __repr__(self):
        return '<%s display_id=%s>' % (type(self).__name__, self.display_id)

    def display(self, obj, **kwargs):
        """Display obj again, as this display."""
        display(obj, display_id=self.display_id, **kwargs)

    def update(self, obj, **kwargs):
        """Show obj in place of every output of this display."""
        display(obj, display_id=self.display_id, update=True, **kwargs)


def display(*objs, include=None, exclude=None, metadata=None, transient=None,
            display_id=None, raw=False, clear=False, update=False, **kwargs):
    """Display each object in the cell's output with its richest formats.

    display_id=True (or an id) makes the output updatable and returns its
    DisplayHandle; update=True replaces the outputs of display_id instead.
    """
    if display_id is True:
        display_id = new_display_id()
    if update and not display_id:
        raise TypeError('display_id is required to update a display')
    if clear:
        clear_output(wait=True)
    extra = jsonable(dict(transient), {}) if isinstance(transient, dict) else {}
    if display_id:
        extra['display_id'] = str(display_id)
    for obj in objs:
        if raw:
            data, meta = (clean(obj, include, exclude) if isinstance(obj, dict) else {'text/plain': str(obj)}), {}
        else:
            data, meta = bundle(obj, include, exclude)
        if metadata:
            meta = jsonable(dict(meta, **metadata), meta)
        emit('update_display_data' if update else 'display_data', data, meta, transient=extra)
    if display_id and not update:
        return DisplayHandle(display_id)


def update_display(obj, *, display_id, **kwargs):
    """Show obj in place of every output of display display_id."""
    display(obj, display_id=display_id, update=True, **kwargs)


def clear_output(wait=False):
    """Clear the cell's output; with wait, once new output arrives."""
    output.emit({'op': 'event', 'seq': st.seq, 'type': 'clear_output', 'wait': bool(wait)})


def figures(quiet=False):
    # Every matplotlib figure still open becomes a PNG in the output, then
    # is closed, as matplotlib's inline backend does.
    plt = sys.modules.get('matplotlib.pyplot')
    helpers = sys.modules.get('matplotlib._pylab_helpers')
    if plt is None or helpers is None:
        return
    managers = helpers.Gcf.get_all_fig_managers()
    if not managers:
        return
    try:
        for m in managers:
            fig = m.canvas.figure
            buf = io.BytesIO()
            fig.canvas.print_figure(buf, format='png', bbox_inches='tight')
            emit('display_data', {'image/png': binascii.b2a_base64(buf.getvalue(), newline=False).decode('ascii'),
                                  'text/plain': repr(fig)}, {})
    except Exception:
        if not quiet:
            raise
    finally:
        try:
            plt.close('all')
        except Exception:
            pass


def on_pyplot(plt):
    def show(*args, **kwargs):
        """Display every open figure in the cell's output."""
        figures()
    plt.show = show


def on_ipython_display(mod):
    for name, fn in (('display', display), ('update_display', update_display),
                     ('clear_output', clear_output), ('DisplayHandle', DisplayHandle)):
        if hasattr(mod, name):
            setattr(mod, name, fn)


HOOKS = {
    'linecache': on_linecache,
    'matplotlib.pyplot': on_pyplot,
    'IPython.core.display_functions': on_ipython_display,
    'IPython.core.display': on_ipython_display,
    'IPython.display': on_ipython_display,
}


class PostImport:
    # A meta path finder that runs HOOKS[name] once module name is loaded.
    def find_spec(self, name, path=None, target=None):
        hook = HOOKS.get(name)
        if hook is None:
            return None
        from importlib.machinery import PathFinder
        spec = PathFinder.find_spec(name, path)
        loader = getattr(spec, 'loader', None)
        if loader is None or not hasattr(loader, 'exec_module'):
            return None
        run = loader.exec_module

        def exec_module(module):
            run(module)
            try:
                hook(module)
            except Exception:
                pass
        loader.exec_module = exec_module
        return spec

    def invalidate_caches(self):
        pass
