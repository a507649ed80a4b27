"""The live viewer: a Starlette app over a Runner (served by uvicorn from `serve`).

    GET  /                       the page (the mosaic, returns, events, controls, chat)
    GET  /api/state              the runner's Snapshot as JSON, with how humans join
    POST /api/control/{command}  pause, resume, step ({"n": k}), stop, faster, slower
    POST /api/chat               {"text": ..., "to": agent or null}
    WS   /ws                     JPEG mosaics (binary) and JSON state and event messages

Every request needs the token: ?token=... in the URL or an X-Token header; 403 without.
"""

from __future__ import annotations

import asyncio
import io
import json
import secrets
import threading
from collections import deque
from importlib import resources

import numpy as np
from PIL import Image
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import HTTPConnection, Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketClose, WebSocketDisconnect

from ..render import mosaic, tile_boxes
from ..runner import Runner

FRAME_INTERVAL_S = 1 / 30  # the most mosaics a page gets per second
STATE_INTERVAL_S = 0.1
FEED_LENGTH = 300  # events a new page is sent from before it connected
# events the feed shows; steps (up to thousands a second) show in the state instead
FEED_SKIPS = {"step"}
CONTROLS = ("pause", "resume", "step", "stop", "faster", "slower")


class TokenRequired:
    """ASGI middleware: a request or websocket without the token gets 403."""

    def __init__(self, app, token: str):
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope, receive, send):
        if scope["type"] in ("http", "websocket"):
            conn = HTTPConnection(scope)
            given = conn.query_params.get("token") or conn.headers.get("x-token") or ""
            if not secrets.compare_digest(given.encode(), self.token):
                if scope["type"] == "websocket":  # closing before accepting answers 403
                    await WebSocketClose(code=1008)(scope, receive, send)
                else:
                    await PlainTextResponse(
                        "403: this needs the token `serve` printed (?token=... or an "
                        "X-Token header)", 403)(scope, receive, send)
                return
        await self.app(scope, receive, send)


class Feed:
    """The recent events (a runner subscriber); thread-safe."""

    def __init__(self):
        self._events: deque[dict] = deque(maxlen=FEED_LENGTH)
        self._lock = threading.Lock()

    def __call__(self, event):
        if event.type not in FEED_SKIPS:
            with self._lock:
                self._events.append(event.to_dict())

    def since(self, seq: int) -> list[dict]:
        with self._lock:
            return [e for e in self._events if e["seq"] > seq]


class Frames:
    """The runner's latest frames as one JPEG, encoded once per new set of frames."""

    def __init__(self, runner: Runner):
        self.runner = runner
        self._lock = threading.Lock()
        self._id, self._jpeg = -1, b""

    def latest(self) -> tuple[int, bytes]:
        frame_id, frames = self.runner.frames()
        with self._lock:
            if frame_id != self._id and frames:
                agents = self.runner.env.possible_agents
                blank = np.zeros_like(next(iter(frames.values())))
                image = Image.fromarray(mosaic([frames.get(a, blank) for a in agents]))
                out = io.BytesIO()
                image.save(out, "JPEG", quality=90)
                self._id, self._jpeg = frame_id, out.getvalue()
            return self._id, self._jpeg


def state(runner: Runner) -> dict:
    """/api/state: the snapshot, the agents' order and how each human joins."""
    env = runner.env
    return {**runner.snapshot().to_dict(), "task": env.task.id,
            "agent_order": list(env.possible_agents),
            "mosaic_tiles": tile_boxes(len(env.possible_agents)),
            "join": {name: " ".join(login.join_command())
                     for name, login in runner.human_logins.items()}}


def create_app(runner: Runner, token: str) -> Starlette:
    feed = Feed()
    runner.subscribe(feed)
    frames = Frames(runner)
    page = resources.files(__package__).joinpath("page.html").read_text(encoding="utf-8")

    async def index(request: Request):
        return HTMLResponse(page)

    async def get_state(request: Request):
        return JSONResponse(state(runner))

    async def control(request: Request):
        command = request.path_params["command"]
        if command not in CONTROLS:
            return PlainTextResponse(f"unknown control {command!r}; the controls are "
                                     f"{', '.join(CONTROLS)}", 404)
        kwargs = {}
        if command == "step":
            body = await _json_body(request)
            if isinstance(body, PlainTextResponse):
                return body
            kwargs["n"] = body.get("n", 1)
        try:
            await run_in_threadpool(getattr(runner, command), source="viewer", **kwargs)
        except (ValueError, TypeError) as e:
            return PlainTextResponse(str(e), 400)
        return JSONResponse(state(runner))

    async def chat(request: Request):
        body = await _json_body(request)
        if isinstance(body, PlainTextResponse):
            return body
        try:
            runner.post_chat(body.get("text"), to=body.get("to") or None)
        except (ValueError, TypeError) as e:
            return PlainTextResponse(str(e), 400)
        return JSONResponse({"queued": True, "step": runner.step_count})

    async def websocket(ws: WebSocket):
        await ws.accept()
        sent_frame, sent_seq, last_state = -1, -1, 0.0
        loop = asyncio.get_running_loop()
        try:
            while True:
                frame_id, jpeg = await run_in_threadpool(frames.latest)
                if frame_id != sent_frame and jpeg:
                    await ws.send_bytes(jpeg)
                    sent_frame = frame_id
                new = feed.since(sent_seq)
                if new:
                    await ws.send_text(json.dumps({"kind": "events", "events": new}))
                    sent_seq = new[-1]["seq"]
                if loop.time() - last_state >= STATE_INTERVAL_S:
                    await ws.send_text(json.dumps({"kind": "state", **state(runner)}))
                    last_state = loop.time()
                await asyncio.sleep(FRAME_INTERVAL_S)
        except WebSocketDisconnect:
            pass

    routes = [Route("/", index), Route("/api/state", get_state),
              Route("/api/control/{command}", control, methods=["POST"]),
              Route("/api/chat", chat, methods=["POST"]), WebSocketRoute("/ws", websocket)]
    return Starlette(routes=routes, middleware=[Middleware(TokenRequired, token=token)])


async def _json_body(request: Request):
    """The request's JSON object ({} for an empty body), or a 400 response saying why not."""
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except ValueError as e:
        return PlainTextResponse(f"the body is not JSON: {e}", 400)
    if not isinstance(body, dict):
        return PlainTextResponse(f"the body must be a JSON object, got {raw[:80]!r}", 400)
    return body
