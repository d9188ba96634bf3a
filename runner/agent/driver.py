# Paddock's Python driver, started by the agent as
#   python3 -c <this source> <warm-up code>
# It runs the warm-up code, tells the agent it is ready, waits for the
# request on fd 3, then runs the request as `python3 -c CODE ARGS...` would,
# or, asked to become a kernel, runs the kernel the request carries
# (kernel.py). See driverchan.go for the frames on fds 3 and 4.
# Every name it defines starts with _paddock so that it can be told apart.
import sys


def _paddock_main():
    import builtins
    import json
    import os

    warmup = sys.argv[1] if len(sys.argv) > 1 else ''
    if warmup:
        exec(compile(warmup, '<warmup>', 'exec'),
             {'__name__': '__paddock_warmup__', '__builtins__': builtins})
    _paddock_exercise()
    _paddock_renew()
    # What the warm-up loaded lives as long as the process: keep the
    # collector from walking it again in every run (a full collection of a
    # pandas-loaded interpreter takes 20-50 ms here).
    import gc
    gc.collect()
    gc.freeze()
    sys.stdout.flush()
    sys.stderr.flush()
    for fd in (1, 2):
        os.write(fd, b'\x00paddock:ready\x00')

    # The request is one frame on fd 3: a 4-byte big-endian length, then
    # that much JSON. Before it, a restored clone's agent may ask for a
    # reseed: it is done then, off the request path, and confirmed on fd 4.
    while True:
        req = json.loads(_paddock_read(int.from_bytes(_paddock_read(4), 'big')))
        if req.get('op') != 'reseed':
            break
        _paddock_renew()
        _paddock_exercise()
        done = b'{"op":"reseeded"}'
        os.write(4, len(done).to_bytes(4, 'big') + done)
    if req.get('op') == 'kernel':
        # Become a kernel: the agent sends the kernel's code along. It
        # reseeds with the driver's function.
        kernel = {'__name__': '__paddock_kernel__', '__builtins__': builtins,
                  'reseed': _paddock_reseed if not req.get('fresh') else _paddock_fresh,
                  'reseed_clone': _paddock_reseed}
        exec(compile(req['source'], '<paddock-kernel>', 'exec'), kernel)
        kernel['serve'](req)
        os._exit(0)
    # fd 4 carries the hint of _paddock_hint and fd 3 its acknowledgement;
    # no child process may inherit them.
    os.set_inheritable(3, False)
    os.set_inheritable(4, False)
    code = req['code']
    args = req.get('args') or []

    os.environ.update(req.get('env') or {})
    sys.argv = ['-c', *args]
    if hasattr(sys, 'orig_argv'):
        sys.orig_argv = [sys.orig_argv[0], '-c', code, *args]
    if not req.get('fresh'):
        _paddock_renew()

    loader = globals().get('__loader__')
    main = type(sys)('__main__')
    main.__loader__ = loader
    main.__annotations__ = {}
    main.__builtins__ = builtins
    sys.modules['__main__'] = main
    status = 0
    try:
        exec(compile(code, '<string>', 'exec'), main.__dict__)
    except SystemExit as e:
        status = _paddock_exit_status(e)
    except BaseException as e:
        # First the hint, while the limits are as the error left them.
        _paddock_hint(e)
        # Drop this frame: the traceback starts in the user's code, as it
        # does under python3 -c.
        e.__traceback__ = e.__traceback__.tb_next
        _paddock_report(e)
        status = 1
    _paddock_exit(status)


def _paddock_exercise():
    # Take the run's first-use costs now, off the hot path: after the
    # warm-up, and again after a restore (which maps memory back in page by
    # page as it is touched). Every path the run takes is exercised once, on
    # throwaway targets: under gVisor a first pass costs page faults and
    # trapped syscalls.
    import atexit
    import builtins
    import io
    import json
    import os
    json.loads('{"op": "run", "code": "", "args": [], "env": {"K": "V"}, "fresh": true}')
    int.from_bytes(b'\x00\x00\x00\x01', 'big').to_bytes(4, 'big')
    compile('', '<string>', 'exec')
    exec(compile('x = [str(i) for i in range(3)]\ny = {"k": x}\n', '<string>', 'exec'), {'__builtins__': builtins})
    print('warm', 1, 2.5, [None], file=io.StringIO())
    sys.stdout.write('')
    sys.stderr.write('')
    sys.stdout.flush()
    sys.stderr.flush()
    type(sys)('__paddock_warm__')
    os.get_inheritable(4)
    dict(os.environ)
    hasattr(sys, 'orig_argv')
    atexit._ncallbacks()
    # _paddock_hint reads the failing call with dis: loaded now, it costs
    # nothing while a fork bomb's processes die.
    import dis


def _paddock_read(n):
    # Exactly n bytes of fd 3.
    import os
    buf = bytearray()
    while len(buf) < n:
        chunk = os.read(3, n - len(buf))
        if not chunk:
            raise EOFError('request channel closed')
        buf += chunk
    return bytes(buf)


def _paddock_exit_status(e):
    # How the interpreter turns an uncaught SystemExit into a status.
    code = e.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xff
    try:
        print(code, file=sys.stderr)
    except Exception:
        pass
    return 1


def _paddock_hint(e):
    # Tell the agent which limit the program is dying of, if any: an
    # uncaught ENOSPC (disk), or an uncaught EAGAIN from a process start
    # (processes). It is a hint only: the agent names the limit in the
    # run's reason only if its own reading finds the limit at its ceiling,
    # and the exit status is always the process's own. A forked child
    # hints too: in a fork bomb the first process refused is the one to
    # hint while the processes still fill the limit.
    import errno
    import os
    if not isinstance(e, OSError):
        return
    if e.errno == errno.ENOSPC:
        limit = b'disk'
    elif e.errno == errno.EAGAIN and _paddock_fork_refused(e):
        limit = b'processes'
    else:
        return
    hint = b'{"op":"limit","limit":"%s"}' % limit
    try:
        os.write(4, len(hint).to_bytes(4, 'big') + hint)
        # Stay as the error left things until the agent has read the
        # limits: ending would hand this process's children to the agent.
        os.read(3, 1)
    except OSError:
        pass


def _paddock_fork_refused(e):
    # Whether e, an EAGAIN, was raised by a process start: a call to fork()
    # or forkpty() (the last name loaded before the failing call, which
    # takes no arguments), or subprocess's process start. By the time the
    # program has ended, a fork bomb's processes have often died of the
    # same error, so the agent reads the limits as soon as it hears of it.
    tb = e.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    if code.co_name == '_execute_child' and code.co_filename.endswith('subprocess.py'):
        return True
    import dis
    name = None
    for ins in dis.get_instructions(code):
        if ins.offset >= tb.tb_lasti:
            break
        if ins.opname in ('LOAD_ATTR', 'LOAD_METHOD', 'LOAD_GLOBAL', 'LOAD_NAME'):
            name = ins.argval
    return name in ('fork', 'forkpty')


def _paddock_exit(status):
    # The first steps of interpreter shutdown (join non-daemon threads, run
    # atexit handlers, flush the standard streams), then _exit: tearing the
    # interpreter down costs tens of milliseconds under gVisor and nothing
    # of this sandbox outlives the run to observe it.
    threading = sys.modules.get('threading')
    if threading is not None:
        try:
            threading._shutdown()
        except BaseException:
            pass
    import atexit
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except BaseException:
            if status == 0:
                status = 120
    import os
    # Close our ends of stdout and stderr so that the agent sees them end
    # (a forked child ends the same way, as python3 -c's children do). The
    # agent takes the status from the process's exit itself.
    for fd in (1, 2):
        try:
            os.close(fd)
        except OSError:
            pass
    os._exit(status)


def _paddock_report(e):
    # What the interpreter does with an uncaught exception.
    hook = getattr(sys, 'excepthook', None)
    if hook is None:
        print('sys.excepthook is missing', file=sys.stderr)
        sys.__excepthook__(type(e), e, e.__traceback__)
        return
    try:
        hook(type(e), e, e.__traceback__)
    except BaseException as err:
        err.__traceback__ = err.__traceback__.tb_next
        print('Error in sys.excepthook:', file=sys.stderr)
        sys.__excepthook__(type(err), err, err.__traceback__)
        print('\nOriginal exception was:', file=sys.stderr)
        sys.__excepthook__(type(e), e, e.__traceback__)


def _paddock_renew():
    # What a clone must do before it runs anything: fresh random state,
    # and the import system's caches dropped (files may have appeared).
    import importlib
    _paddock_reseed()
    importlib.invalidate_caches()


def _paddock_fresh():
    # The reseed the kernel asks for was done before its request came.
    pass


def _paddock_reseed():
    import os

    # A restored snapshot shares its memory, random state included, with
    # every other clone: draw fresh seeds from the kernel, which is not
    # shared. os.urandom, secrets and uuid4 read the kernel already.
    rnd = sys.modules.get('random')
    if rnd is not None:
        rnd.seed()
    np = sys.modules.get('numpy')
    if np is not None:
        try:
            np.random.seed()
        except Exception:
            pass
    ssl = sys.modules.get('ssl')
    if ssl is not None:
        # OpenSSL's generator lives in process memory too; mixing in fresh
        # entropy reseeds it.
        ssl.RAND_add(os.urandom(48), 48.0)
    tempfile = sys.modules.get('tempfile')
    if tempfile is not None:
        tempfile._name_sequence = None


_paddock_main()
