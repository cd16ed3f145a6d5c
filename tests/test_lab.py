"""A chapter as a JupyterLab user meets it: opened as a notebook through a real Jupyter
server's contents API (Jupytext's contents manager), run on a kernel of that server,
and saved back to its ``.py`` script with only the user's edit changed."""

from __future__ import annotations

import asyncio
import difflib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import jupytext
import pytest

REPO = Path(__file__).resolve().parents[1]
CHAPTER = "04_anisotropic_transform.py"  # needs no dataset: its models are linear
TOKEN = "rsutils-test"
pytestmark = pytest.mark.slow


def test_every_chapter_round_trips_through_jupytext_unchanged() -> None:
    """Opening and saving without an edit rewrites no byte (nothing stamped on save)."""
    config = jupytext.config.load_jupytext_configuration_file(str(REPO / "jupytext.toml"))
    for source in sorted((REPO / "notebooks").glob("[0-9][0-9]_*.py")):
        text = source.read_text()
        notebook = jupytext.reads(text, fmt="py:percent")
        assert jupytext.writes(notebook, fmt="py:percent", config=config) == text, source.name


@pytest.fixture
def server(tmp_path):
    """``jupyter server`` serving a folder with one chapter, the repository's Jupytext
    configuration, and a private cache."""
    root = tmp_path / "lab"
    root.mkdir()
    shutil.copy(REPO / "notebooks" / CHAPTER, root / CHAPTER)
    shutil.copy(REPO / "jupytext.toml", root / "jupytext.toml")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env |= {"RSUTILS_CACHE": str(tmp_path / "cache"), "JUPYTER_RUNTIME_DIR": str(tmp_path)}
    command = [sys.executable, "-m", "jupyter_server", "--no-browser", "--allow-root",
               f"--port={port}", "--ip=127.0.0.1", f"--IdentityProvider.token={TOKEN}",
               f"--ServerApp.root_dir={root}"]  # fmt: skip
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(url, process)
        yield url, root
    finally:
        process.terminate()
        process.wait(timeout=30)
        process.stderr.close()


def _wait_until_up(url: str, process: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"jupyter server exited: {process.stderr.read().decode()[-2000:]}")
        try:
            api(url, "GET", "/api/status")
            return
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.5)
    raise TimeoutError("jupyter server did not start")


def api(url: str, method: str, path: str, body: dict | None = None) -> dict:
    request = urllib.request.Request(
        url + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"token {TOKEN}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        payload = response.read()
    return json.loads(payload) if payload else {}


async def run_cells(url: str, kernel_id: str, sources: list[str]) -> list[list[dict]]:
    """Execute ``sources`` in order on the server's kernel; each cell's outputs."""
    from tornado.websocket import websocket_connect

    ws_url = url.replace("http", "ws") + f"/api/kernels/{kernel_id}/channels?token={TOKEN}"
    connection = await websocket_connect(ws_url)
    session, outputs = uuid.uuid4().hex, []
    try:
        for source in sources:
            msg_id = uuid.uuid4().hex
            header = {"msg_id": msg_id, "session": session, "username": "test",
                      "msg_type": "execute_request", "version": "5.3"}  # fmt: skip
            content = {"code": source, "silent": False, "store_history": True,
                       "user_expressions": {}, "allow_stdin": False,
                       "stop_on_error": True}  # fmt: skip
            await connection.write_message(json.dumps({"header": header, "parent_header": {},
                "metadata": {}, "content": content, "channel": "shell"}))  # fmt: skip
            outputs.append(await _collect(connection, msg_id))
    finally:
        connection.close()
    return outputs


async def _collect(connection, msg_id: str) -> list[dict]:
    cell_outputs, idle, replied = [], False, None
    while not (idle and replied):
        message = json.loads(await asyncio.wait_for(connection.read_message(), timeout=300))
        if message.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        kind, content = message["msg_type"], message["content"]
        if kind in ("stream", "display_data", "execute_result", "error"):
            cell_outputs.append({"output_type": kind, **content})
        if kind == "status" and content["execution_state"] == "idle":
            idle = True
        if kind == "execute_reply":
            replied = content
    assert replied["status"] == "ok", cell_outputs[-1] if cell_outputs else replied
    return cell_outputs


def test_a_chapter_opens_runs_and_saves_back_through_a_jupyter_server(server) -> None:
    url, root = server
    original = (root / CHAPTER).read_text()
    model = api(url, "GET", f"/api/contents/{CHAPTER}?type=notebook&content=1")
    assert model["type"] == "notebook"  # Jupytext's contents manager serves the script
    notebook = model["content"]
    cells = notebook["cells"]
    parameters = next(c for c in cells if "parameters" in c["metadata"].get("tags", []))
    source = "".join(parameters["source"])
    assert 'profile = "cpu"' in source
    parameters["source"] = source.replace('profile = "cpu"', 'profile = "smoke"')  # the edit
    kernel = api(url, "POST", "/api/kernels", {"name": "python3"})
    try:
        code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
        sources = ["".join(c["source"]) for c in code]
        outputs = asyncio.run(run_cells(url, kernel["id"], sources))
    finally:
        api(url, "DELETE", f"/api/kernels/{kernel['id']}")
    assert not [o for cell in outputs for o in cell if o["output_type"] == "error"]
    assert any(o["output_type"] == "display_data" for cell in outputs for o in cell)  # figures
    api(url, "PUT", f"/api/contents/{CHAPTER}", {"type": "notebook", "format": "json",
                                                  "content": notebook})  # fmt: skip
    saved = (root / CHAPTER).read_text()
    changed = [
        line
        for line in difflib.unified_diff(original.splitlines(), saved.splitlines(), lineterm="")
        if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))
    ]
    assert changed == ['-profile = "cpu"  # smoke | cpu | paper',
                       '+profile = "smoke"  # smoke | cpu | paper']  # fmt: skip
    assert not list(root.glob("*.ipynb"))  # nothing paired, nothing executed left beside it
