#!/usr/bin/env python3
"""A live OTLP/HTTP receiver that keeps nothing: answers every POST 200 `{}` and counts the
bytes (printed on exit). For measuring what exporting traces costs the relay
(scripts/relay-instructions --relay-args "--otlp-endpoint http://127.0.0.1:PORT").

usage: otlp_sink.py PORT
"""
import http.server
import sys

received = 0


class Sink(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        global received
        length = int(self.headers.get("content-length", "0"))
        received += len(self.rfile.read(length))
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Sink)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        print(f"otlp sink received {received} bytes", file=sys.stderr)
