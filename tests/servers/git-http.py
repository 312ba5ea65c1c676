#!/usr/bin/env python3
"""A git smart-HTTP server on loopback for the tests: git's own
http-backend (CGI) behind a check of the Authorization header, as a git
host that takes a token does. Every request without the expected header
gets 401 (and is counted in DIR/denied), so a test sees whether each git
call a command makes carried the token.

    git-http.py ROOT USER:PASSWORD DIR    prints PORT=N once it listens
"""
import base64
import os
import subprocess
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT, CRED, DIR = sys.argv[1], sys.argv[2], sys.argv[3]
WANT = "basic " + base64.b64encode(CRED.encode()).decode()
MAX_BODY = 256 << 20


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("git-http: " + (fmt % args) + "\n")

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return bytes(out)
                if len(out) + size > MAX_BODY:
                    raise ValueError("body too large")
                out += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        if n > MAX_BODY:
            raise ValueError("body too large")
        return self.rfile.read(n)

    def handle_any(self, method):
        data = self.body() if method == "POST" else b""
        if (self.headers.get("Authorization") or "").lower() != WANT.lower():
            with open(os.path.join(DIR, "denied"), "a") as f:
                f.write(self.path.split("?")[0] + "\n")
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="test"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path, _, query = self.path.partition("?")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": ROOT,
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": method,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(data)),
            "REMOTE_USER": CRED.split(":")[0],
            "REMOTE_ADDR": "127.0.0.1",
        }
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        res = subprocess.run(["git", "http-backend"], input=data, env=env, capture_output=True)
        head, _, rest = res.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, rest = res.stdout.partition(b"\n\n")
        status = 200
        headers = []
        for line in head.decode("latin-1").splitlines():
            k, _, v = line.partition(":")
            if k.lower() == "status":
                status = int(v.split()[0])
            elif k:
                headers.append((k, v.strip()))
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(rest)))
        self.end_headers()
        self.wfile.write(rest)

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print("PORT=%d" % server.server_address[1], flush=True)
server.serve_forever()
