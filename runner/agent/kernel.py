# Paddock's Python kernel. The driver (driver.py) runs this code, followed by
# kernel_display.py, when the agent asks it to become a kernel, then calls
# serve(), which never returns.
# Cells arrive as frames on fd 3; outputs, as Jupyter-shaped events, and the
# end of each cell leave as frames on fd 4 (see driverchan.go).
#
# A reader thread takes every frame of fd 3: cells go to the main thread,
# which runs them one at a time; questions about code (complete, inspect,
# is_complete: kernel_introspect.py) to a thread that answers them from the
# live namespace, even while a cell runs; input replies to the cell waiting
# in input() or getpass().
#
# The user's namespace is a fresh __main__ module that lives as long as the
# kernel. print() and everything else written to sys.stdout and sys.stderr
# become ordered stream events; child processes keep the real fds 1 and 2,
# which the agent forwards raw. SIGINT interrupts the running cell only.
#
# Opening a kernel must be fast: only modules the driver has loaded already,
# or built-in ones, are imported up front.
import _ast
import _signal
import _thread
import binascii
import builtins
import codecs
import io
import json
import os
import sys
import time

IN, OUT = 3, 4
FLUSH_DELAY = 0.02       # stream output waits at most this long...
FLUSH_SIZE = 64 << 10    # ...or until this many characters are buffered
MAX_FRAME = (64 << 20) - 8192
CO_COROUTINE = 0x80
COMPILE_FLAGS = _ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
MAIN_THREAD = _thread.get_ident()
KERNEL_GLOBALS = globals()  # frames with these globals are the kernel's


class State:
    seq = 0          # the current, or last, cell
    key = ''         # its key, which every frame of it carries
    running = False  # a cell runs: SIGINT raises KeyboardInterrupt
    shield = 0       # the main thread is writing a frame: defer the interrupt
    pending = False  # an interrupt arrived under the shield
    child = False    # this process is a fork of the kernel
    stdin = False    # the running cell may read input
    early = None     # the seq of a cell interrupted before it started


st = State()
ilock = _thread.allocate_lock()  # orders an interrupt against its cell's start
user = None          # the user's __main__ module
wlock = _thread.allocate_lock()


def shield():
    if _thread.get_ident() != MAIN_THREAD:
        return False
    st.shield += 1
    return True


def unshield(main):
    if not main:
        return
    st.shield -= 1
    if st.shield == 0 and st.pending:
        st.pending = False
        if st.running:
            raise KeyboardInterrupt


def on_sigint(signum, frame):
    if not st.running:
        return
    if st.shield:
        st.pending = True
        return
    raise KeyboardInterrupt


def note(seq, text):
    return json.dumps({'op': 'event', 'seq': seq, 'key': st.key, 'type': 'stream',
                       'stream': 'stderr', 'text': '[paddock: %s]\n' % text})


def frame(msg):
    # Every frame is of the current cell (a cell's output is flushed before
    # its end, the next cell starts after it) and carries its key: the
    # agent drops what lacks it, as frames the cell's code wrote itself.
    msg.setdefault('key', st.key)
    try:
        body = json.dumps(msg, allow_nan=False)
    except (TypeError, ValueError) as e:
        body = note(msg.get('seq', st.seq), 'an output could not be encoded: %s' % e)
    data = body.encode('ascii')
    if len(data) > MAX_FRAME:
        data = note(msg.get('seq', st.seq), 'an output of %d bytes was dropped: over the frame limit' % len(data)).encode()
    return len(data).to_bytes(4, 'big') + data


def send(*msgs):
    # Frames on fd 4, in one write. A write the main thread starts is never
    # cut short by an interrupt: that would break the channel.
    if st.child:
        return
    view = memoryview(b''.join([frame(m) for m in msgs]))
    main = shield()
    try:
        with wlock:
            while view:
                view = view[os.write(OUT, view):]
    except OSError:
        os._exit(0)  # the agent is gone
    finally:
        unshield(main)


class Output:
    # Stream output of both streams, in write order, until it is flushed: at
    # most FLUSH_DELAY after the first unflushed write, before any other
    # event, and at the end of the cell.
    def __init__(self):
        self.lock = _thread.allocate_lock()
        self.parts = []
        self.size = 0
        self.held = None  # the cell's result, sent with its end unless more follows
        self.armed = False
        self.wake = _thread.allocate_lock()
        self.wake.acquire()

    def write(self, name, text):
        main = shield()
        try:
            with self.lock:
                parts = self.parts
                if parts and parts[-1][0] == name:
                    parts[-1][1].append(text)
                else:
                    parts.append((name, [text]))
                self.size += len(text)
                if self.size >= FLUSH_SIZE:
                    self._flush()
                elif not self.armed:
                    self.armed = True
                    self.wake.release()
        finally:
            unshield(main)

    def flush(self):
        main = shield()
        try:
            with self.lock:
                self._flush()
        finally:
            unshield(main)

    def emit(self, msg, hold=False):
        # An event, after the stream output written before it. A held event
        # waits for what follows it, or for the end of the cell.
        main = shield()
        try:
            with self.lock:
                self._flush()
                if hold:
                    self.held = msg
                else:
                    send(msg)
        finally:
            unshield(main)

    def finish(self, done):
        # The rest of the cell's output and its end, in one write.
        main = shield()
        try:
            with self.lock:
                msgs = self._take()
                msgs.append(done)
                send(*msgs)
        finally:
            unshield(main)

    def _take(self):
        msgs = [self.held] if self.held is not None else []
        parts, self.parts, self.size, self.held = self.parts, [], 0, None
        for name, texts in parts:
            msgs.append({'op': 'event', 'seq': st.seq, 'type': 'stream',
                         'stream': name, 'text': ''.join(texts)})
        return msgs

    def _flush(self):
        msgs = self._take()
        if msgs:
            send(*msgs)

    def flusher(self):
        while True:
            self.wake.acquire()
            time.sleep(FLUSH_DELAY)
            with self.lock:
                self.armed = False
                self._flush()


output = Output()


def write_raw(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class Stream(io.TextIOBase):
    # sys.stdout or sys.stderr of the kernel. In a forked child it writes to
    # the real descriptor.
    encoding = 'utf-8'
    errors = 'strict'

    def __init__(self, name, fd):
        self._name = name
        self._fd = fd
        self.buffer = Bytes(self)

    @property
    def name(self):
        return '<%s>' % self._name

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError('write() argument must be str, not %s' % type(s).__name__)
        if st.child:
            write_raw(self._fd, s.encode('utf-8', 'backslashreplace'))
        elif s:
            output.write(self._name, s)
        return len(s)

    def flush(self):
        if not st.child:
            output.flush()

    def fileno(self):
        return self._fd

    def isatty(self):
        return False

    def writable(self):
        return True


class Bytes(io.BufferedIOBase):
    # sys.stdout.buffer: bytes are decoded as UTF-8 and join the text.
    def __init__(self, text):
        self._text = text
        self._decode = codecs.getincrementaldecoder('utf-8')('replace').decode

    def write(self, b):
        data = bytes(b)
        if st.child:
            write_raw(self._text.fileno(), data)
        else:
            s = self._decode(data)
            if s:
                self._text.write(s)
        return len(data)

    def flush(self):
        self._text.flush()

    def fileno(self):
        return self._text.fileno()

    def writable(self):
        return True


def after_fork():
    # A forked child (multiprocessing…) must not write on the kernel's
    # channel: its output goes to the real descriptors.
    st.child = True
    st.running = False
    for fd in (IN, OUT):
        try:
            os.close(fd)
        except OSError:
            pass


# Cells.

def silenced(code, node):
    # Whether a ';' follows the cell's last expression.
    lines = code.replace('\r\n', '\n').replace('\r', '\n').split('\n')
    try:
        rest = lines[node.end_lineno - 1].encode('utf-8')[node.end_col_offset:]
    except (IndexError, TypeError):
        return False
    return rest.decode('utf-8', 'replace').lstrip().startswith(';')


def compile_cell(code, filename):
    # The cell's statements, and its last expression when its value is the
    # cell's result. A one-line expression compiles once.
    if '\n' not in code and not code.rstrip().endswith(';'):
        try:
            return None, compile(code, filename, 'eval', COMPILE_FLAGS, dont_inherit=True)
        except SyntaxError:
            pass
    tree = compile(code, filename, 'exec', _ast.PyCF_ONLY_AST | COMPILE_FLAGS, dont_inherit=True)
    expr = None
    if tree.body and isinstance(tree.body[-1], _ast.Expr) and not silenced(code, tree.body[-1]):
        expr = _ast.Expression(tree.body.pop().value)
    body = compile(tree, filename, 'exec', COMPILE_FLAGS, dont_inherit=True)
    if expr is not None:
        expr = compile(expr, filename, 'eval', COMPILE_FLAGS, dont_inherit=True)
    return body, expr


loop = None


def evaluate(code, ns):
    global loop
    r = eval(code, ns)
    if code.co_flags & CO_COROUTINE:  # top-level await
        import asyncio
        if loop is None or loop.is_closed():
            loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        r = loop.run_until_complete(r)
    return r


def without_kernel(tb):
    # tb without the kernel's frames, nor asyncio's before the user's.
    from types import TracebackType
    keep, seen_user = [], False
    while tb is not None:
        g = tb.tb_frame.f_globals
        name = g.get('__name__') or ''
        if g is not KERNEL_GLOBALS and (seen_user or not (name == 'asyncio' or name.startswith('asyncio.'))):
            keep.append(tb)
            seen_user = True
        tb = tb.tb_next
    out = None
    for t in reversed(keep):
        out = TracebackType(out, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return out


def describe(e):
    import linecache
    import traceback
    sync_linecache(linecache)
    seen, todo = set(), [e]
    while todo:
        x = todo.pop()
        if x is None or id(x) in seen:
            continue
        seen.add(id(x))
        x.__traceback__ = without_kernel(x.__traceback__)
        todo += [x.__cause__, x.__context__]
    sys.last_type, sys.last_value, sys.last_traceback = type(e), e, e.__traceback__
    try:
        text = ''.join(traceback.format_exception(type(e), e, e.__traceback__))
    except Exception:
        text = type(e).__name__
    try:
        value = str(e)
    except Exception:
        value = '<unprintable %s object>' % type(e).__name__
    return {'name': type(e).__name__, 'value': value, 'traceback': text.rstrip('\n').split('\n')}


def leave(e):
    # SystemExit from a cell ends the kernel, as it ends python3.
    code = e.code
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code & 0xff
    else:
        try:
            print(code, file=sys.stderr)
        except Exception:
            pass
        status = 1
    st.running = False
    try:
        import atexit
        atexit._run_exitfuncs()
    except BaseException:
        pass
    try:
        output.flush()
    except BaseException:
        pass
    os._exit(status)


cells = {}  # filename → source of every cell, for tracebacks
latest = None  # the filename of the cell remembered last


def remember(filename, code):
    # Tracebacks show the cells' lines through linecache, once anything has
    # imported it (traceback, warnings…). A cell adds its own lines; the
    # others are there already unless the cache was cleared (sync_linecache),
    # so a cell costs the same in the ten-thousandth cell as in the first.
    global latest
    cells[filename] = code
    lc = sys.modules.get('linecache')
    if lc is not None:
        sync_linecache(lc)
        cache_cell(lc, filename, code)
    latest = filename


def sync_linecache(lc):
    # Every cell's lines in lc's cache. Only clearcache() removes them (its
    # checkcache() keeps entries without a file), and it removes them all:
    # the latest cell's missing means all are.
    if latest is not None and latest not in lc.cache:
        on_linecache(lc)


def interrupt(seq):
    # On the reader thread: stop cell seq. The agent sends this frame right
    # after the cell's, so the cell may not have started yet; then it is
    # remembered, and the cell stops as it starts. A signal alone would be
    # lost while the main thread is still idle.
    with ilock:
        if seq != st.seq:
            st.early = seq
        elif st.running:
            _signal.pthread_kill(MAIN_THREAD, _signal.SIGINT)


def on_linecache(lc):
    for filename, code in cells.items():
        if filename not in lc.cache:
            cache_cell(lc, filename, code)


def cache_cell(lc, filename, code):
    lc.cache[filename] = (len(code), None, code.splitlines(True), filename)


def run_cell(msg):
    with ilock:
        st.seq = msg.get('seq', 0)
        st.key = msg.get('key', '')
        st.pending = False
        st.running = True
        early, st.early = st.early == st.seq, None
    code = msg.get('code', '')
    filename = '<cell-%d>' % msg.get('count', 0)
    remember(filename, code)
    if msg.get('env'):
        os.environ.update(msg['env'])
    status, error = 'ok', None
    st.stdin = bool(msg.get('stdin'))
    try:
        try:
            if early:
                raise KeyboardInterrupt
            body, expr = compile_cell(code, filename)
            ns = user.__dict__
            if body is not None:
                evaluate(body, ns)
            if expr is not None:
                value = evaluate(expr, ns)
                if value is not None:
                    data, meta = bundle(value)
                    emit('execute_result', data, meta, hold=True)
            figures()
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as e:
            status, error = 'error', describe(e)
            output.emit({'op': 'event', 'seq': st.seq, 'type': 'error', 'error': error})
            figures(quiet=True)
        st.running = False
    except KeyboardInterrupt:
        st.running = False
        status, error = 'interrupted', None
        plt = sys.modules.get('matplotlib.pyplot')
        if plt is not None:
            try:
                plt.close('all')
            except Exception:
                pass
    except SystemExit as e:
        leave(e)
    return status, error


pending = bytearray()  # what the reader thread read of fd 3 ahead of its frame


def read_exact(n):
    # n bytes of fd 3. A read takes whatever the pipe holds, so a frame's
    # header and body come in one system call rather than two.
    while len(pending) < n:
        chunk = os.read(IN, max(n - len(pending), 65536))
        if not chunk:
            return None
        pending.extend(chunk)
    data = bytes(pending[:n])
    del pending[:n]
    return data


def receive():
    head = read_exact(4)
    body = head and read_exact(int.from_bytes(head, 'big'))
    return None if body is None else json.loads(body)


class Mailbox:
    # Messages from the reader thread to one consumer thread. A wait in the
    # main thread ends with an interrupt; the messages stay consistent.
    def __init__(self):
        self.lock = _thread.allocate_lock()
        self.items = []
        self.ready = _thread.allocate_lock()  # held while it may be empty
        self.ready.acquire()

    def put(self, msg):
        with self.lock:
            self.items.append(msg)
            if self.ready.locked():
                self.ready.release()

    def get(self, poll=-1):
        # poll, when set, is the longest the wait blocks, in seconds, before
        # it looks again. A signal that arrives just before the wait blocks
        # does not end it, so a wait that an interrupt must end polls.
        while True:
            with self.lock:
                if self.items:
                    return self.items.pop(0)
            self.ready.acquire(timeout=poll)


cell_box = Mailbox()  # execute requests, for the main thread
input_box = Mailbox()  # input replies, for the cell in input()
ask_box = Mailbox()  # questions about code, for the answering thread
input_lock = _thread.allocate_lock()
INPUT_POLL = 0.05  # seconds: how soon a cell waiting for input sees an interrupt at worst
STDIN_REFUSED = 'raw_input was called, but this frontend does not support input requests.'


class StdinNotImplementedError(NotImplementedError, EOFError):
    """A cell read input, which the front end does not allow.

    As IPython's, it is a NotImplementedError; it is an EOFError too, as a
    read of an empty stdin would raise."""


def read_input(prompt='', password=False):
    # A line of input from the front end, as a Jupyter kernel's input()
    # gets it: the request goes up, the cell waits for the reply. The
    # cell's interrupt (and so its timeout) ends the wait.
    if st.child or not st.running:
        raise EOFError('EOF when reading a line')
    if not st.stdin:
        raise StdinNotImplementedError(STDIN_REFUSED)
    prompt = str(prompt)
    with input_lock:
        seq = st.seq
        output.emit({'op': 'input', 'seq': seq, 'prompt': prompt, 'password': bool(password)})
        while True:
            reply = input_box.get(INPUT_POLL)
            if reply.get('seq') == seq:
                break
    err = reply.get('error')
    if err == STDIN_REFUSED:
        raise StdinNotImplementedError(err)
    if err:
        raise EOFError(err)
    return str(reply.get('value', ''))


def kernel_input(prompt=''):
    """Read a line of input from the front end (Jupyter's input_request)."""
    return read_input(prompt, False)


def kernel_getpass(prompt='Password: ', stream=None):
    """Read a password from the front end, without echo."""
    return read_input(prompt, True)


def on_getpass(mod):
    mod.getpass = kernel_getpass


def reader():
    # Every frame of fd 3, to the thread it is for. A channel it cannot
    # read ends the kernel rather than leave it deaf.
    while True:
        try:
            msg = receive()
        except BaseException:
            os._exit(70)
        if msg is None:
            os._exit(0)  # the agent closed the channel
        op = msg.get('op')
        if op == 'execute':
            cell_box.put(msg)
        elif op == 'input_reply':
            input_box.put(msg)
        elif op in ASK_OPS:
            ask_box.put(msg)
        elif op == 'interrupt':
            interrupt(msg.get('seq', 0))


def answerer():
    while True:
        answer(ask_box.get())


def serve(req):
    global user
    os.set_inheritable(IN, False)
    os.set_inheritable(OUT, False)
    os.environ.update(req.get('env') or {})
    sys.argv = ['']
    if hasattr(sys, 'orig_argv'):
        sys.orig_argv = sys.orig_argv[:1]
    previous = sys.modules.get('__main__')
    user = type(sys)('__main__')
    user.__loader__ = getattr(previous, '__loader__', None)
    user.__builtins__ = builtins
    sys.modules['__main__'] = user
    builtins.display = display
    builtins.input = kernel_input
    HOOKS['getpass'] = on_getpass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    sys.stdout = Stream('stdout', 1)
    sys.stderr = Stream('stderr', 2)
    _signal.signal(_signal.SIGINT, on_sigint)
    os.register_at_fork(after_in_child=after_fork)
    _thread.start_new_thread(output.flusher, ())
    sys.meta_path.insert(0, PostImport())
    for name, hook in HOOKS.items():
        if name in sys.modules:
            hook(sys.modules[name])
    reseed()  # the driver's, passed in: clones of a snapshot share their random state
    import importlib
    importlib.invalidate_caches()
    _thread.start_new_thread(reader, ())
    _thread.start_new_thread(answerer, ())
    send({'op': 'ready'})
    while True:
        try:
            msg = cell_box.get()
        except KeyboardInterrupt:
            continue  # no cell runs: nothing to stop
        try:
            status, error = run_cell(msg)
        except KeyboardInterrupt:
            st.running = False
            status, error = 'interrupted', None
        output.finish({'op': 'done', 'seq': msg.get('seq', 0), 'status': status, 'error': error})
