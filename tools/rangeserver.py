"""A local HTTP server for files held in memory, with byte ranges (RFC 9110, section 14: a
``Range: bytes=a-b`` GET answered 206 with Content-Range), counting the requests it answers
and the body bytes it sends: the stand-in object store of the fsspec tests and benchmark
(optionally answering late, as a store far away does).

    with RangeServer({"f.h5": data}) as server:
        url = server.url("f.h5")
        ...
        server.requests, server.bytes_served
"""
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_RANGE = re.compile(r"bytes=(\d+)-(\d*)$")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"     # one request per connection: no idle thread is left

    def do_HEAD(self):
        self._answer(send_body=False)

    def do_GET(self):
        self._answer(send_body=True)

    def _answer(self, send_body):
        server = self.server
        if server.latency:
            time.sleep(server.latency)
        data = server.files.get(self.path.lstrip("/"))
        if data is None:
            server.count(0)
            self.send_error(404)
            return
        status, lo, hi = 200, 0, len(data)
        asked = self.headers.get("Range")
        if asked:
            m = _RANGE.match(asked.strip())
            if m is None or int(m[1]) >= len(data):
                server.count(0)
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            lo = int(m[1])
            hi = min(int(m[2]) + 1, len(data)) if m[2] else len(data)
            status = 206
        body = data[lo:hi] if send_body else b""
        server.count(len(body))
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(hi - lo))
        if status == 206:
            self.send_header("Content-Range", f"bytes {lo}-{hi - 1}/{len(data)}")
        self.end_headers()
        if send_body:
            self.wfile.write(body)

    def log_message(self, *args):
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256     # the listen backlog: a burst of concurrent range requests

    def __init__(self, files, latency):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.files = files
        self.latency = latency
        self.lock = threading.Lock()
        self.requests = 0
        self.bytes_served = 0

    def count(self, nbytes):
        with self.lock:
            self.requests += 1
            self.bytes_served += nbytes


class RangeServer:
    """Serve ``files`` (name -> bytes) on 127.0.0.1 from a thread until ``close()``, each
    answer ``latency`` seconds late (an object store's time to first byte; requests made
    concurrently wait concurrently)."""

    def __init__(self, files, latency=0.0):
        self._server = _Server(dict(files), latency)
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True,
                                        name="rangeserver")
        self._thread.start()

    def url(self, name):
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/{name}"

    @property
    def requests(self):
        return self._server.requests

    @property
    def bytes_served(self):
        return self._server.bytes_served

    def reset(self):
        """Start counting again from zero."""
        with self._server.lock:
            self._server.requests = self._server.bytes_served = 0

    def close(self):
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
