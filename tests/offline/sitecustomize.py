"""Offline guard for the test suite: with GT_OFFLINE=1, any Python process that starts with this
folder on PYTHONPATH (pytest itself, nbval's kernels, JupyterLab and its kernels) refuses network
connections and name look-ups for anything but this machine (loopback and Unix sockets).

Installed by the repository's root conftest.py. A blocked attempt raises OSError naming the
address, so a notebook or helper that tries to download fails its test with a clear message.
"""

import os

if os.environ.get("GT_OFFLINE") == "1":
    import ipaddress
    import socket

    _LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback", ""}

    def _is_local(host) -> bool:
        if host is None:
            return True
        if isinstance(host, bytes):
            host = host.decode("ascii", "replace")
        host = str(host).split("%")[0].strip("[]").lower()
        if host in _LOCAL_NAMES:
            return True
        try:
            ip = ipaddress.ip_address(host)
        except ValueError:
            return False
        return ip.is_loopback or ip.is_unspecified

    def _blocked(what) -> OSError:
        return OSError(101, f"offline guard (GT_OFFLINE=1): network access to {what!r} is blocked "
                            "in tests; the series must run without downloading anything")

    def _check(sock, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple):
            if not _is_local(address[0]):
                raise _blocked(address)

    _connect, _connect_ex = socket.socket.connect, socket.socket.connect_ex
    _sendto, _getaddrinfo = socket.socket.sendto, socket.getaddrinfo

    def connect(self, address):
        _check(self, address)
        return _connect(self, address)

    def connect_ex(self, address):
        _check(self, address)
        return _connect_ex(self, address)

    def sendto(self, data, *args):
        _check(self, args[-1])
        return _sendto(self, data, *args)

    def getaddrinfo(host, *args, **kwargs):
        if not _is_local(host):
            raise socket.gaierror(socket.EAI_NONAME, f"offline guard (GT_OFFLINE=1): no name look-ups "
                                                     f"in tests ({host!r})")
        return _getaddrinfo(host, *args, **kwargs)

    socket.socket.connect, socket.socket.connect_ex, socket.socket.sendto = connect, connect_ex, sendto
    socket.getaddrinfo = getaddrinfo
    socket.GT_OFFLINE_GUARD = True
