#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A client of the agent's socket written apart from agent/proto.c, for tests.

agent_client.py SOCKET MESSAGE [--lines N] [--timeout S] [--linger S]
  MESSAGE is sent as given, with Python escapes (\\n, \\x00, ...) decoded;
  "{pid}" in it becomes this process's pid (REGISTER wants the caller's pid).
  Prints every line the agent sends until it closes the connection, N lines
  were read, or S seconds passed (then "TIMEOUT"); "EOF" when it closed.
  Each line is prefixed with the time it arrived (Unix seconds.ms).
  --linger S: stay alive S seconds after that (a "running" task for the agent).
"""
import os
import socket
import sys
import time


linger_s = [0.0]


def main():
    args = sys.argv[1:]
    lines, timeout, linger = 0, 5.0, 0.0
    if "--linger" in args:
        i = args.index("--linger")
        linger = float(args[i + 1])
        del args[i:i + 2]
    if "--lines" in args:
        i = args.index("--lines")
        lines = int(args[i + 1])
        del args[i:i + 2]
    if "--timeout" in args:
        i = args.index("--timeout")
        timeout = float(args[i + 1])
        del args[i:i + 2]
    linger_s[0] = linger
    path, msg = args[0], args[1]
    data = msg.replace("{pid}", str(os.getpid())).encode("latin-1")
    data = data.decode("unicode_escape").encode("latin-1")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
    except OSError as e:
        print("CONNECT", e.strerror)
        return 2
    try:
        s.sendall(data)
    except BrokenPipeError:
        pass    # the agent answered (busy) and closed before reading: read that
    end = time.time() + timeout
    buf, got = b"", 0
    while True:
        left = end - time.time()
        if left <= 0:
            print("TIMEOUT")
            return 1
        s.settimeout(left)
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            print("TIMEOUT")
            return 1
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            if buf:
                print("%.3f %s" % (time.time(), buf.decode("latin-1")))
            print("EOF")
            return 0
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            print("%.3f %s" % (time.time(), line.decode("latin-1")), flush=True)
            got += 1
            if lines and got >= lines:
                return 0


if __name__ == "__main__":
    rc = main()
    sys.stdout.flush()
    time.sleep(linger_s[0])
    sys.exit(rc)
