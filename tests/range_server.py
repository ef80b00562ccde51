"""A static file server on 127.0.0.1 with HTTP Range support and injectable faults, for the
remote and adversarial audit tests (tests/remote_audit_test.sh, tests/adversarial_audit_test.sh).

    range_server.py ROOT PORT_FILE [--flip SUBSTR] [--drop-once BYTES] [--ignore-range]
                                   [--bad-range] [--fault NAME] [--only SUBSTR] [--log FILE]

Binds an ephemeral port and writes it to PORT_FILE. Faults:
  --flip SUBSTR     flip one byte in the middle of every body whose path contains SUBSTR
  --drop-once N     the first response longer than N bytes stops after N bytes (connection cut)
  --ignore-range    answer every request with 200 and the whole file
  --bad-range       answer ranges with a Content-Range one byte off
  --fault NAME      a hostile answer to every request whose path contains --only (default: every
                    path but publication.json):
      shifted         206 with the range one byte later (its bytes and Content-Range agree)
      short-range     206 with one byte less than asked, its Content-Range saying so
      wrong-total     206 whose Content-Range gives another total size
      truncate        the full Content-Length, then half the body, then the connection closed
      reset           the connection reset (RST) before any answer
      endless         206 with the right Content-Range, no Content-Length, and bytes without end
                      (the server stops after 256 MiB or when the client hangs up)
      huge-length     206 announcing a Content-Length of 10^15, then a few bytes and a close
      whole-other     200 for a range: the whole file with one byte more than it holds
      whole-endless   200 for a range, no Content-Length: the whole file, then bytes without end
                      (a server that ignores ranges and never stops; the bytes asked for are
                      right, so a reader that stops at the range's end gets them)
  --log FILE        append "path first last" for every response
The request loops are bounded: each answer ends, and the server stops when its parent kills it.
"""

import argparse
import os
import re
import socket
import struct
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ARGS = None
DROPPED = threading.Event()
ENDLESS_LIMIT = 256 << 20


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        path = os.path.normpath(os.path.join(ARGS.root, self.path.lstrip("/")))
        if not path.startswith(os.path.abspath(ARGS.root)) or not os.path.isfile(path):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        size = os.path.getsize(path)
        first, last, status = 0, size - 1, 200
        m = re.fullmatch(r"bytes=(\d+)-(\d+)", self.headers.get("Range", ""))
        if m and not ARGS.ignore_range:
            first, last, status = int(m.group(1)), min(int(m.group(2)), size - 1), 206
        if ARGS.fault and self.hostile():
            return self.fault(path, size, first, last, m is not None)
        with open(path, "rb") as f:
            f.seek(first)
            body = bytearray(f.read(last - first + 1))
        if ARGS.flip and ARGS.flip in self.path and body:
            body[len(body) // 2] ^= 0x01
        self.send_response(status)
        if status == 206:
            shift = 1 if ARGS.bad_range else 0
            self.send_header("Content-Range", f"bytes {first + shift}-{last + shift}/{size}")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if ARGS.log:
            with open(ARGS.log, "a") as log:
                log.write(f"{self.path} {first} {last}\n")
        if ARGS.drop_once and len(body) > ARGS.drop_once and not DROPPED.is_set():
            DROPPED.set()
            self.wfile.write(body[:ARGS.drop_once])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
            return
        self.wfile.write(body)

    def hostile(self):
        if ARGS.only:
            return ARGS.only in self.path
        return not self.path.endswith("publication.json")

    def answer(self, status, headers, body, close=False):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()
        if close:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)

    def fault(self, path, size, first, last, ranged):
        with open(path, "rb") as f:
            data = f.read()
        name = ARGS.fault
        if name == "shifted":
            a, b = min(first + 1, size - 1), min(last + 1, size - 1)
            self.answer(206, [("Content-Range", f"bytes {a}-{b}/{size}"),
                              ("Content-Length", str(b - a + 1))], data[a:b + 1])
        elif name == "short-range":
            b = max(first, last - 1)
            self.answer(206, [("Content-Range", f"bytes {first}-{b}/{size}"),
                              ("Content-Length", str(b - first + 1))], data[first:b + 1])
        elif name == "wrong-total":
            self.answer(206, [("Content-Range", f"bytes {first}-{last}/{size + 1}"),
                              ("Content-Length", str(last - first + 1))], data[first:last + 1])
        elif name == "truncate":
            body = data[first:last + 1]
            self.answer(206 if ranged else 200,
                        [("Content-Range", f"bytes {first}-{last}/{size}"),
                         ("Content-Length", str(len(body)))], body[:len(body) // 2], close=True)
        elif name == "reset":
            self.close_connection = True
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
            self.connection.close()
        elif name == "endless":
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {first}-{last}/{size}")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            block, sent = data[first:last + 1] or b"\0", 0
            try:
                while sent < ENDLESS_LIMIT:
                    self.wfile.write(block)
                    sent += len(block)
            except OSError:
                pass  # the client hung up, as it should
        elif name == "huge-length":
            self.answer(206, [("Content-Range", f"bytes {first}-{last}/{size}"),
                              ("Content-Length", str(10**15))], data[first:first + 16], close=True)
        elif name == "whole-other":
            self.answer(200, [("Content-Length", str(size + 1))], data + b"\0")
        elif name == "whole-endless":
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            sent = 0
            try:
                self.wfile.write(data)
                while sent < ENDLESS_LIMIT:
                    self.wfile.write(b"\0" * 65536)
                    sent += 65536
            except OSError:
                pass  # the client hung up at the end of its range, as it should
        else:
            raise SystemExit(f"unknown fault {name}")


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("root")
    p.add_argument("port_file")
    p.add_argument("--flip")
    p.add_argument("--drop-once", type=int, default=0)
    p.add_argument("--ignore-range", action="store_true")
    p.add_argument("--bad-range", action="store_true")
    p.add_argument("--fault", choices=["shifted", "short-range", "wrong-total", "truncate",
                                       "reset", "endless", "huge-length", "whole-other",
                                       "whole-endless"])
    p.add_argument("--only")
    p.add_argument("--log")
    ARGS = p.parse_args()
    ARGS.root = os.path.abspath(ARGS.root)
    ThreadingHTTPServer.daemon_threads = True
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(ARGS.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(ARGS.port_file + ".tmp", ARGS.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
