"""``python -m tests.support.wsgi_serve PORT``: this project's WSGI application on a threaded standard-library
server. Unlike ``runserver`` it does not ask the database for unapplied migrations as it starts, so it serves
with the database down, as gunicorn does."""

from __future__ import annotations

import sys
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIServer, make_server


class ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


def main() -> None:
    from lexery.wsgi import application

    make_server("127.0.0.1", int(sys.argv[1]), application, server_class=ThreadingWSGIServer).serve_forever()


if __name__ == "__main__":
    main()
