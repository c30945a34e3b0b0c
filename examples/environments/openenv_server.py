#!/usr/bin/env python3
"""Guess the number over OpenEnv's WebSocket session protocol (python3-websockets).

The same game as guess_number_server.py, served the way OpenEnv environment servers serve theirs:
one WebSocket connection on /ws is one environment session, and every message is a JSON object
with a `type`:

    -> {"type": "reset", "data": {"seed": 7}}
    <- {"type": "observation", "data": {"observation": {"message": "guess the number",
                                  "legal_actions": ["one", …, "fifteen"]}, "reward": null, "done": false}}
    -> {"type": "step", "data": {"guess": "eight"}}
    <- {"type": "observation", "data": {"observation": {"message": "too high", …}, "reward": 0.0, "done": false}}
    -> {"type": "state"}
    <- {"type": "state", "data": {"episode_id": "…", "step_count": 1}}
    -> {"type": "close"}                      (the server closes the connection)

A message it cannot serve is answered {"type": "error", "data": {"message", "code"}} with OpenEnv's
codes (INVALID_JSON, UNKNOWN_TYPE, VALIDATION_ERROR, EXECUTION_ERROR) and the session goes on.
Plain HTTP on the same port: GET /health, and GET /schema with the action and observation schemas.

Registered in StarLab with the observation's text in `message`, the action string in `guess`, and
the action set "one" … "fifteen" (docs/environments.md).

    /usr/bin/python3 examples/environments/openenv_server.py --port 8766
"""

import argparse
import asyncio
import http
import json
import os
import sys
import uuid

import websockets

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from guess_number_server import NUMBER_WORDS, Game  # noqa: E402  (the game itself, shared with the StarLab-protocol server)

# Largest message read; the protocol's messages are a few dozen bytes.
MAX_MESSAGE_BYTES = 64 * 1024


class Invalid(Exception):
    """A message this session cannot serve: answered as an error message with `code`."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def observation(game, text, reward):
    """OpenEnv's serialised observation: the observation's own fields, then reward and done beside them."""
    return {"type": "observation", "data": {"observation": {"message": text, "legal_actions": NUMBER_WORDS[: game.maximum]}, "reward": reward, "done": game.done}}


class Session:
    """One connection's environment: created empty, (re)started by every reset."""

    def __init__(self, options):
        self.options = options
        self.game = None
        self.episode_id = None
        self.step_count = 0

    def reset(self, data):
        seed = data.get("seed")
        if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= 2**32 - 1:
            raise Invalid("VALIDATION_ERROR", "data.seed must be an integer from 0 to 4294967295")
        self.game = Game(seed, self.options.max, self.options.guesses)
        self.episode_id = data.get("episode_id") or uuid.uuid4().hex
        self.step_count = 0
        return observation(self.game, self.game.observation(), None)

    def step(self, data):
        guess = data.get("guess")
        if set(data) - {"guess", "metadata"}:
            raise Invalid("VALIDATION_ERROR", f"unknown action fields {sorted(set(data) - {'guess', 'metadata'})}; the action is {{\"guess\": \"<number>\"}}")
        actions = NUMBER_WORDS[: self.options.max]
        if not isinstance(guess, str) or guess.strip() not in actions:
            raise Invalid("VALIDATION_ERROR", f"data.guess must be one of {', '.join(actions)}")
        if self.game is None:
            raise Invalid("EXECUTION_ERROR", "reset before step")
        if self.game.done:
            raise Invalid("EXECUTION_ERROR", "the episode is over; reset for another")
        text, reward = self.game.step(actions.index(guess.strip()) + 1)
        self.step_count += 1
        return observation(self.game, text, reward)

    def state(self):
        return {"type": "state", "data": {"episode_id": self.episode_id, "step_count": self.step_count}}


async def serve_session(websocket, options):
    if websocket.path != "/ws":
        await websocket.close(code=1008, reason="the session endpoint is /ws")
        return
    session = Session(options)
    async for raw in websocket:
        try:
            try:
                message = json.loads(raw)
            except ValueError as error:
                raise Invalid("INVALID_JSON", f"Invalid JSON: {error}") from None
            kind = message.get("type") if isinstance(message, dict) else None
            data = message.get("data", {}) if isinstance(message, dict) else {}
            if not isinstance(data, dict):
                raise Invalid("VALIDATION_ERROR", "data must be an object")
            if kind == "close":
                break
            if kind == "reset":
                answer = session.reset(data)
            elif kind == "step":
                answer = session.step(data)
            elif kind == "state":
                answer = session.state()
            else:
                raise Invalid("UNKNOWN_TYPE", f"Unknown message type: {kind}")
        except Invalid as error:
            answer = {"type": "error", "data": {"message": str(error), "code": error.code}}
        await websocket.send(json.dumps(answer))
    await websocket.close()


def http_routes(options):
    """Plain HTTP answers on the WebSocket's port (anything but /ws), as OpenEnv servers give them."""
    schema = {
        "action": {"type": "object", "properties": {"guess": {"type": "string", "enum": NUMBER_WORDS[: options.max]}}, "required": ["guess"]},
        "observation": {"type": "object", "properties": {"message": {"type": "string"}, "legal_actions": {"type": "array", "items": {"type": "string"}}}},
        "state": {"type": "object", "properties": {"episode_id": {"type": ["string", "null"]}, "step_count": {"type": "integer"}}},
    }

    def process_request(path, headers):
        if path == "/ws":
            return None  # the WebSocket handshake goes on
        body = {"/health": {"status": "healthy"}, "/schema": schema}.get(path)
        status = http.HTTPStatus.OK if body is not None else http.HTTPStatus.NOT_FOUND
        data = json.dumps(body if body is not None else {"detail": f"no {path}; the session endpoint is /ws"}).encode()
        return status, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))], data

    return process_request


async def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8766, help="0 picks a free port")
    parser.add_argument("--max", type=int, default=15, choices=range(2, len(NUMBER_WORDS) + 1), metavar=f"2..{len(NUMBER_WORDS)}")
    parser.add_argument("--guesses", type=int, default=4, choices=range(1, 11), metavar="1..10")
    options = parser.parse_args()
    async with websockets.serve(lambda ws, *_: serve_session(ws, options), options.host, options.port, process_request=http_routes(options), max_size=MAX_MESSAGE_BYTES) as server:
        host, port = server.sockets[0].getsockname()[:2]
        print(f"listening on ws://{host}:{port}/ws", flush=True)
        await asyncio.Future()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
