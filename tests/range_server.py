"""A static file server on 127.0.0.1 with HTTP Range support and injectable faults, for the
remote audit tests (tests/remote_audit_test.sh).

    range_server.py ROOT PORT_FILE [--flip SUBSTR] [--drop-once BYTES] [--ignore-range]
                                   [--bad-range] [--log FILE]

Binds an ephemeral port and writes it to PORT_FILE. Faults:
  --flip SUBSTR     flip one byte in the middle of every body whose path contains SUBSTR
  --drop-once N     the first response longer than N bytes stops after N bytes (connection cut)
  --ignore-range    answer every request with 200 and the whole file
  --bad-range       answer ranges with a Content-Range one byte off
  --log FILE        append "path first last" for every response
"""

import argparse
import os
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ARGS = None
DROPPED = threading.Event()


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


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("root")
    p.add_argument("port_file")
    p.add_argument("--flip")
    p.add_argument("--drop-once", type=int, default=0)
    p.add_argument("--ignore-range", action="store_true")
    p.add_argument("--bad-range", action="store_true")
    p.add_argument("--log")
    ARGS = p.parse_args()
    ARGS.root = os.path.abspath(ARGS.root)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(ARGS.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(ARGS.port_file + ".tmp", ARGS.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
