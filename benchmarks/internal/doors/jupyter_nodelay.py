"""Jupyter Server with Nagle's algorithm off on the sockets tornado serves.

The bench's second native baseline. Debian's files stay as they are: this
launcher patches tornado in its own process, then runs jupyter_server's
main with the arguments it was given. Tornado turns TCP_NODELAY on only
while it finishes an HTTP response, and back off afterwards; a kernel
WebSocket therefore runs with Nagle on. Here every stream keeps it off,
and the first WebSocket message sent reads the option back from its
socket and prints it once on stderr, so the bench can check it is really
set. (The ZMQ sockets to ipykernel are libzmq's, which sets TCP_NODELAY on
every TCP socket it opens.)
"""

import socket
import sys

from tornado import httpserver, iostream, websocket

_set_nodelay = iostream.IOStream.set_nodelay


def _always_nodelay(stream, value):
    _set_nodelay(stream, True)


iostream.IOStream.set_nodelay = _always_nodelay

_handle_stream = httpserver.HTTPServer.handle_stream


def _handle_nodelay(server, stream, address):
    stream.set_nodelay(True)
    return _handle_stream(server, stream, address)


httpserver.HTTPServer.handle_stream = _handle_nodelay

_write_message = websocket.WebSocketProtocol13.write_message
_checked = False


def _write_checked(protocol, message, binary=False):
    global _checked
    if not _checked:
        _checked = True
        on = protocol.stream.socket.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        print(f"paddock-bench: kernel WebSocket TCP_NODELAY={1 if on else 0}", file=sys.stderr, flush=True)
    return _write_message(protocol, message, binary)


websocket.WebSocketProtocol13.write_message = _write_checked

if __name__ == "__main__":
    from jupyter_server import serverapp

    sys.argv[0] = "jupyter-server"
    serverapp.launch_new_instance()
