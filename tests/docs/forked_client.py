"""``deliberate`` as the console blocks' shell finds it (``tests/docs/forked.py``): hands the
fork server at ``@SOCKET@`` this process's arguments, environment, working directory and
standard descriptors, then exits as the command it ran did. The standard library alone: it
runs as ``python -I -S``."""

import json
import os
import signal
import socket
import struct
import sys

HEADER = struct.Struct("!I")
CODE = struct.Struct("!i")

request = json.dumps({"argv": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd()}).encode()
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.connect("@SOCKET@")
socket.send_fds(server, [HEADER.pack(len(request))], [0, 1, 2])
server.sendall(request)
answer = b""
while len(answer) < CODE.size:
    more = server.recv(CODE.size - len(answer))
    if not more:
        sys.exit("deliberate: the fork server ended before the command (tests/docs/forked.py)")
    answer += more
(code,) = CODE.unpack(answer)
if code < 0:  # ended by a signal: end by the same one, as the shell would have seen it
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
sys.exit(code)
