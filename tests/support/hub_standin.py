"""A stand-in for the Hugging Face Hub on 127.0.0.1, so that helpers.gpt2.download runs the real hub client offline.

It serves one model repository from a local folder through the endpoints huggingface_hub's snapshot_download uses
(read from its source, version 2.4): the revision's info (the commit sha), the file tree of that commit (sizes, git
and LFS hashes), and each file's HEAD and GET under /{repo}/resolve/{sha}/{name} with the X-Repo-Commit and ETag
headers the client checks. Anything else gets the Hub's 404. Point the client at it with HF_ENDPOINT=<.url>."""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlparse


class StandInHub:
    def __init__(self, repo: str, folder: Path):
        self.repo = repo
        self.files = {p.name: p.read_bytes() for p in sorted(Path(folder).iterdir()) if p.is_file()}
        self.sha = hashlib.sha1(b"".join(hashlib.sha256(b).digest() for b in self.files.values())).hexdigest()
        self.requests: list[tuple[str, str]] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def _info(self) -> dict:
        return {"id": self.repo, "modelId": self.repo, "sha": self.sha, "private": False,
                "siblings": [{"rfilename": f} for f in self.files]}

    def _tree(self) -> list[dict]:
        return [{"type": "file", "path": f, "size": len(b), "oid": hashlib.sha1(b).hexdigest(),
                 "lfs": {"oid": hashlib.sha256(b).hexdigest(), "size": len(b), "pointerSize": 134}}
                for f, b in self.files.items()]

    def _handler(self):
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _send(self, code: int, body: bytes, headers: dict, head: bool) -> None:
                self.send_response(code)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if not head:
                    self.wfile.write(body)

            def _route(self, head: bool) -> None:
                path = unquote(urlparse(self.path).path)
                hub.requests.append((self.command, path))
                api, resolve = f"/api/models/{hub.repo}/", f"/{hub.repo}/resolve/"
                as_json = {"Content-Type": "application/json"}
                if path.startswith(api + "revision/"):
                    return self._send(200, json.dumps(hub._info()).encode(), as_json, head)
                if path.startswith(api + "tree/"):
                    return self._send(200, json.dumps(hub._tree()).encode(), as_json, head)
                if path.startswith(resolve):
                    name = path[len(resolve):].partition("/")[2]
                    if name in hub.files:
                        body = hub.files[name]
                        headers = {"X-Repo-Commit": hub.sha, "Content-Type": "application/octet-stream",
                                   "ETag": f'"{hashlib.sha256(body).hexdigest()}"'}
                        return self._send(200, body, headers, head)
                return self._send(404, b'{"error": "Entry not found"}', {"X-Error-Code": "EntryNotFound"}, head)

            def do_GET(self):
                self._route(head=False)

            def do_HEAD(self):
                self._route(head=True)

        return Handler

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
