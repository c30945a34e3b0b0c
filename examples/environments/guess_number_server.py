#!/usr/bin/env python3
"""Guess the number: a StarLab environment server in Python's standard library alone.

Copy this file to start your own environment. It speaks the StarLab environment protocol
(docs/environment-protocol.yaml, explained in docs/environments.md):

    GET  /manifest  -> {"actions", "maxTurns", "vocabulary", "expert", "description"}
    POST /reset     {"seed"}            -> {"session", "observation"}
    POST /step      {"session", "action"} -> {"observation", "reward", "done", "success"?}
    POST /expert    {"session"}         -> {"actions"}      (the manifest says "expert": true)
    POST /fork      {"session"}         -> {"session"}      (optional: a copy of a live episode)
    POST /close     {"session"}         -> 204

The game: the server picks a number from one to MAX (fifteen) from the seed; the agent has GUESSES
(4) guesses, one or more per turn, and after each is told whether it was too low or too high.
Reward 1 for finding it, 0 otherwise. It needs several turns and the feedback of the earlier ones:
binary search (the expert) always wins in 4 guesses, a random guesser about a quarter of the time.
The actions are numbers written as words ("eight"), one token each for the policy (StarLab writes
rewards in the history with digit tokens it keeps for that, so an action must not be a bare digit).
The observations are the hints alone ("too low"): the guess they answer stands just before them in
the history the policy reads, and an observation that named actions would narrow what StarLab's
random agent and format warm-up try to the actions it names.

    python3 examples/environments/guess_number_server.py --port 8765
    npm run env:check -- http://127.0.0.1:8765

Port 0 picks a free port; the first line on stdout says where it listens.
"""

import argparse
import collections
import json
import random
import sys
import threading
import uuid
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# Sessions kept at most; the least recently used goes first (a trainer that crashed never closes).
MAX_SESSIONS = 10_000
# Largest request body read (every request of the protocol is a few dozen bytes).
MAX_BODY_BYTES = 64 * 1024


# The actions: numbers as words, one token each for the policy.
NUMBER_WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"]


class Game:
    """One episode. Deterministic: the seed picks the number, nothing else is random."""

    def __init__(self, seed, maximum, guesses):
        self.maximum = maximum
        self.target = random.Random(seed).randint(1, maximum)
        self.guesses_left = guesses
        # What the hints so far allow: the expert's interval.
        self.low, self.high = 1, maximum
        self.done = False

    def observation(self):
        return "guess the number"

    def step(self, guess):
        """Plays the guess `guess` (an int); returns the hint and the reward. The hint does not repeat
        the guess: the agent's own answer stands before it in the history."""
        self.guesses_left -= 1
        if guess == self.target:
            self.done = True
            return "right", 1.0
        if guess < self.target:
            self.low = max(self.low, guess + 1)
            hint = "too low"
        else:
            self.high = min(self.high, guess - 1)
            hint = "too high"
        self.done = self.guesses_left == 0
        return hint, 0.0

    def expert(self):
        """Binary search: the middle of what the hints still allow (one guess; the next needs its hint)."""
        return [] if self.done else [NUMBER_WORDS[(self.low + self.high) // 2 - 1]]

    def copy(self):
        twin = Game.__new__(Game)
        twin.__dict__.update(self.__dict__)
        return twin


class BadRequest(Exception):
    """Answered as a problem+json with `status`; `field` names the request field at fault."""

    def __init__(self, status, detail, field=None):
        super().__init__(detail)
        self.status, self.detail, self.field = status, detail, field


class Sessions:
    """Live episodes by session id; the handler threads share it, so every access holds the lock."""

    def __init__(self):
        self.lock = threading.Lock()
        self.games = collections.OrderedDict()

    def open(self, game):
        session = uuid.uuid4().hex
        with self.lock:
            self.games[session] = game
            while len(self.games) > MAX_SESSIONS:
                self.games.popitem(last=False)
        return session

    def get(self, session):
        with self.lock:
            game = self.games.get(session)
            if game is None:
                raise BadRequest(404, f"no session '{session}' (never opened, closed, or expired)", "session")
            self.games.move_to_end(session)
            return game

    def close(self, session):
        with self.lock:
            self.games.pop(session, None)


def parse_object(raw):
    """The request body as a JSON object, or a 400."""
    try:
        body = json.loads(raw or b"null")
    except ValueError:
        raise BadRequest(400, "the body is not JSON") from None
    if not isinstance(body, dict):
        raise BadRequest(400, "the body must be a JSON object")
    return body


def make_handler(options):
    sessions = Sessions()
    actions = NUMBER_WORDS[: options.max]
    manifest = {
        "actions": actions,
        "maxTurns": options.guesses,
        # The words observations are made of; each becomes one token of the policy (numbers are actions).
        "vocabulary": ["guess", "the", "number", "too", "low", "high", "right"],
        "expert": True,
        "description": f"Guess a number from one to {actions[-1]} in {options.guesses} guesses, "
        "told after each whether it is too low or too high.",
    }

    def field(body, name, kind):
        value = body.get(name)
        # bool is an int in Python: a seed of true is a wrong type, not 1.
        if not isinstance(value, kind) or isinstance(value, bool):
            raise BadRequest(400, f"'{name}' must be {'an integer' if kind is int else 'a string'}", name)
        return value

    def reset(body):
        seed = field(body, "seed", int)
        if not 0 <= seed <= 2**32 - 1:
            raise BadRequest(400, "'seed' must be between 0 and 4294967295", "seed")
        game = Game(seed, options.max, options.guesses)
        return 200, {"session": sessions.open(game), "observation": game.observation()}

    def step(body):
        game = sessions.get(field(body, "session", str))
        action = field(body, "action", str).strip()
        if action not in actions:
            raise BadRequest(400, f"'action' must be one of {', '.join(actions)}; got '{action[:64]}'", "action")
        with sessions.lock:  # two steps of one session at once would both spend a guess
            if game.done:
                raise BadRequest(409, "the episode is over; reset for another", "session")
            observation, reward = game.step(actions.index(action) + 1)
            answer = {"observation": observation, "reward": reward, "done": game.done}
        if game.done:
            answer["success"] = reward > 0
        return 200, answer

    def expert(body):
        game = sessions.get(field(body, "session", str))
        with sessions.lock:
            return 200, {"actions": game.expert()}

    def fork(body):
        game = sessions.get(field(body, "session", str))
        with sessions.lock:
            twin = game.copy()
        return 200, {"session": sessions.open(twin)}

    def close(body):
        sessions.close(field(body, "session", str))
        return 204, None

    routes = {("GET", "/manifest"): lambda _: (200, manifest), ("POST", "/reset"): reset, ("POST", "/step"): step, ("POST", "/expert"): expert, ("POST", "/close"): close}
    if options.fork:
        routes[("POST", "/fork")] = fork

    class Handler(BaseHTTPRequestHandler):
        # HTTP/1.1 keeps connections alive: StarLab sends a turn's requests over a few of them.
        protocol_version = "HTTP/1.1"
        # Headers and body go out in separate writes: without TCP_NODELAY the second waits for the
        # client's delayed ACK, some 40 ms a request.
        disable_nagle_algorithm = True

        def do_GET(self):
            self.handle_request("GET")

        def do_POST(self):
            self.handle_request("POST")

        def handle_request(self, method):
            try:
                # Read the body first, whatever the route: unread, it would be taken for the next request.
                raw = self.read_raw() if method == "POST" else b"{}"
                route = routes.get((method, self.path))
                if route is None:
                    raise BadRequest(404, f"no {method} {self.path}")
                status, answer = route(parse_object(raw))
            except BadRequest as problem:
                status = problem.status
                answer = {"type": "about:blank", "title": HTTPStatus(status).phrase, "status": status, "detail": problem.detail}
                if problem.field:
                    answer["errors"] = [{"field": problem.field, "message": problem.detail}]
            self.answer(status, answer)

        def read_raw(self):
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = -1
            if not 0 <= length <= MAX_BODY_BYTES:
                self.close_connection = True  # the unread body would be taken for the next request
                raise BadRequest(413 if length > 0 else 400, f"the body must come with a Content-Length of at most {MAX_BODY_BYTES} bytes")
            return self.rfile.read(length)

        def answer(self, status, body):
            data = b"" if body is None else json.dumps(body).encode()
            self.send_response(status)
            if body is not None:
                self.send_header("Content-Type", "application/json" if status < 400 else "application/problem+json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format, *args):
            if options.verbose:
                super().log_message(format, *args)

    return Handler


class Server(ThreadingHTTPServer):
    # A trainer opens many connections at once (a turn's requests go out together); the default
    # listen backlog of 5 drops the rest, which the client then retries only after a second.
    request_queue_size = 256
    daemon_threads = True


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    parser.add_argument("--max", type=int, default=15, choices=range(2, len(NUMBER_WORDS) + 1), metavar=f"2..{len(NUMBER_WORDS)}", help="the number is from one to MAX")
    parser.add_argument("--guesses", type=int, default=4, choices=range(1, 11), metavar="1..10", help="guesses per episode")
    parser.add_argument("--no-fork", dest="fork", action="store_false", help="do not offer POST /fork")
    parser.add_argument("--verbose", action="store_true", help="log every request on stderr")
    options = parser.parse_args()
    server = Server((options.host, options.port), make_handler(options))
    host, port = server.server_address[:2]
    print(f"listening on http://{host}:{port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    sys.exit(main())
