"""TLS for the Python test servers (serve_upstream.py, mcp_http_server.py), from their
environment."""

import os


def tls_wrap(server):
    """Serves TLS when UPSTREAM_TLS_CERT and UPSTREAM_TLS_KEY name PEM files; with
    UPSTREAM_TLS_CLIENT_CA, clients must present a certificate signed by it (mTLS)."""
    cert = os.environ.get("UPSTREAM_TLS_CERT")
    if not cert:
        return
    import ssl
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, os.environ["UPSTREAM_TLS_KEY"])
    ca = os.environ.get("UPSTREAM_TLS_CLIENT_CA")
    if ca:
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(ca)
    # The handshake happens in the handler's thread, on first read.
    server.socket = ctx.wrap_socket(server.socket, server_side=True,
                                    do_handshake_on_connect=False)
