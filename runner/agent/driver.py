# Paddock's one-shot Python driver, started by the agent as
#   python3 -c <this source> <warm-up code>
# It runs the warm-up code, tells the agent it is ready, waits for the
# request on fd 3, then runs the request as `python3 -c CODE ARGS...` would.
# Every name it defines starts with _paddock so that it can be told apart.
import sys


def _paddock_main():
    import builtins
    import importlib
    import json
    import os

    warmup = sys.argv[1] if len(sys.argv) > 1 else ''
    if warmup:
        exec(compile(warmup, '<warmup>', 'exec'),
             {'__name__': '__paddock_warmup__', '__builtins__': builtins})
    # Take the run's first-use costs now, off the hot path.
    json.loads('{"code": "", "args": [], "env": {}}')
    compile('', '<string>', 'exec')
    importlib.invalidate_caches()
    sys.stdout.flush()
    sys.stderr.flush()
    for fd in (1, 2):
        os.write(fd, b'\x00paddock:ready\x00')

    chunks = []
    while True:
        chunk = os.read(3, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(3)
    req = json.loads(b''.join(chunks))
    code = req['code']
    args = req.get('args') or []

    os.environ.update(req.get('env') or {})
    sys.argv = ['-c', *args]
    if hasattr(sys, 'orig_argv'):
        sys.orig_argv = [sys.orig_argv[0], '-c', code, *args]
    _paddock_reseed()
    importlib.invalidate_caches()

    loader = globals().get('__loader__')
    main = type(sys)('__main__')
    main.__loader__ = loader
    main.__annotations__ = {}
    main.__builtins__ = builtins
    sys.modules['__main__'] = main
    try:
        exec(compile(code, '<string>', 'exec'), main.__dict__)
    except SystemExit:
        raise
    except BaseException as e:
        # Drop this frame: the traceback starts in the user's code, as it
        # does under python3 -c.
        e.__traceback__ = e.__traceback__.tb_next
        _paddock_report(e)
        sys.exit(1)


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


def _paddock_reseed():
    # A restored snapshot shares its random state with every other clone.
    rnd = sys.modules.get('random')
    if rnd is not None:
        rnd.seed()
    np = sys.modules.get('numpy')
    if np is not None:
        try:
            np.random.seed()
        except Exception:
            pass


_paddock_main()
