"""PyTorch side of bench/reference.ts: the same policy, update and generation as the TypeScript
side, at the shape it passes as JSON on argv[1]. Prints one JSON line with tokens/s.

A bench reference only (python3-torch with OpenBLAS from Debian), never a dependency of the
service. The model mirrors src/training/policy/transformer.ts: GPT-2 style pre-LN decoder, fused
qkv, rotary embeddings on queries and keys on top of learned positions, optional row and column
embeddings, ReLU feed-forward, a language-model head and a scalar value head.
"""
import json
import math
import sys
import time

import torch
import torch.nn.functional as F

cfg = json.loads(sys.argv[1])
torch.set_num_threads(cfg["threads"])
torch.manual_seed(1)
V, P, d, L, H = cfg["vocabSize"], cfg["contextLength"], cfg["dModel"], cfg["layers"], cfg["heads"]
dh = d // H
ffn = d * cfg["ffnMultiplier"]
GRID = 16


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = torch.nn.Embedding(V, d)
        self.pos = torch.nn.Embedding(P, d)
        self.grid = cfg.get("gridPositions", False)
        if self.grid:
            self.rows = torch.nn.Embedding(GRID, d)
            self.cols = torch.nn.Embedding(GRID, d)
        self.blocks = torch.nn.ModuleList()
        for _ in range(L):
            b = torch.nn.Module()
            b.ln1 = torch.nn.LayerNorm(d)
            b.qkv = torch.nn.Linear(d, 3 * d)
            b.out = torch.nn.Linear(d, d)
            b.ln2 = torch.nn.LayerNorm(d)
            b.f1 = torch.nn.Linear(d, ffn)
            b.f2 = torch.nn.Linear(ffn, d)
            self.blocks.append(b)
        self.lnf = torch.nn.LayerNorm(d)
        self.lm = torch.nn.Linear(d, V)
        self.value = torch.nn.Linear(d, 1)
        half = dh // 2
        inv = 10000 ** (-(2 * torch.arange(half, dtype=torch.float32)) / dh)
        ang = torch.arange(P, dtype=torch.float32)[:, None] * inv[None, :]
        self.register_buffer("cos", ang.cos())
        self.register_buffer("sin", ang.sin())

    def rotate(self, x, pos):  # x [B, H, T, dh], pos [B, T]
        c, s = self.cos[pos][:, None], self.sin[pos][:, None]
        x1, x2 = x[..., : dh // 2], x[..., dh // 2 :]
        return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], -1)

    def forward(self, ids, pos, cache=None, mask=None):
        """ids, pos [B, T]; cache: per layer (k, v) of earlier tokens; mask: additive [B|1, 1, T, S]."""
        B, T = ids.shape
        x = self.tok(ids) + self.pos(pos)
        if self.grid:
            x = x + self.rows(ids % GRID) + self.cols(pos % GRID)
        new_cache = []
        for i, b in enumerate(self.blocks):
            q, k, v = b.qkv(b.ln1(x)).view(B, T, 3, H, dh).permute(2, 0, 3, 1, 4)
            q, k = self.rotate(q, pos), self.rotate(k, pos)
            if cache is not None:
                k = torch.cat([cache[i][0], k], 2)
                v = torch.cat([cache[i][1], v], 2)
            new_cache.append((k, v))
            scores = q @ k.transpose(-1, -2) / math.sqrt(dh)
            if mask is not None:
                scores = scores + mask
            a = (scores.softmax(-1) @ v).transpose(1, 2).reshape(B, T, d)
            x = x + b.out(a)
            x = x + b.f2(F.relu(b.f1(b.ln2(x))))
        h = self.lnf(x)
        return self.lm(h), self.value(h).squeeze(-1), new_cache


def causal(T):
    return torch.full((T, T), -1e9).triu(1)


def timed(fn, repeats):
    """Median wall and CPU seconds (process_time: every thread of this process)."""
    fn()
    wall, cpu = [], []
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return sorted(wall)[len(wall) // 2], sorted(cpu)[len(cpu) // 2]


def update_bench():
    R, T = cfg["updateRows"], cfg["updateLength"]
    actor, critic = Model(), Model() if cfg["critic"] else None
    opt_a = torch.optim.AdamW(actor.parameters(), lr=1e-3, weight_decay=0.01)
    opt_c = torch.optim.AdamW(critic.parameters(), lr=1e-2, weight_decay=0.01) if critic else None
    g = torch.Generator().manual_seed(2)
    ids = torch.randint(0, V, (R, T), generator=g)
    targets = torch.randint(0, V, (R, T), generator=g)
    pos = torch.arange(T)[None].expand(R, T)
    weights = (torch.rand(R, T, generator=g) < 0.3).float()
    adv = torch.randn(R, T, generator=g)
    returns = torch.randn(R, T, generator=g)
    mask = causal(T)
    with torch.no_grad():
        old = torch.log_softmax(actor(ids, pos, mask=mask)[0], -1).gather(-1, targets[..., None]).squeeze(-1)

    def step():
        logits = actor(ids, pos, mask=mask)[0]
        lp = torch.log_softmax(logits, -1).gather(-1, targets[..., None]).squeeze(-1)
        ratio = torch.exp(lp - old)
        surrogate = torch.minimum(ratio * adv, ratio.clamp(0.8, 1.28) * adv)
        loss = -(surrogate * weights).sum() / weights.sum()
        opt_a.zero_grad()
        loss.backward()
        opt_a.step()
        if critic:
            values = critic(ids, pos, mask=mask)[1]
            vloss = (((values - returns) ** 2) * weights).sum() / weights.sum()
            opt_c.zero_grad()
            vloss.backward()
            opt_c.step()

    seconds, cpu = timed(step, cfg["repeats"])
    return R * T / seconds, seconds, R * T / cpu


@torch.no_grad()
def generation_bench():
    B, Lp, N = cfg["genRows"], cfg["promptLength"], cfg["newTokens"]
    model = Model()
    g = torch.Generator().manual_seed(3)
    prompts = torch.randint(0, V, (B, Lp), generator=g)

    def run():
        pos = torch.arange(Lp)[None].expand(B, Lp)
        logits, _, cache = model(prompts, pos, mask=causal(Lp))
        for n in range(N):
            token = torch.multinomial(torch.softmax(logits[:, -1], -1), 1, generator=g)
            logits, _, cache = model(token, torch.full((B, 1), Lp + n), cache=cache)

    seconds, cpu = timed(run, cfg["repeats"])
    return B * N / seconds, seconds, B * N / cpu


def blas_loaded():
    """The BLAS library this process really mapped (Debian switches it by alternatives)."""
    with open("/proc/self/maps") as maps:
        names = {line.split("/")[-1].strip() for line in maps if "blas" in line}
    return ",".join(sorted(names)) or "none"


update_tps, update_s, update_cpu_tps = update_bench()
gen_tps, gen_s, gen_cpu_tps = generation_bench()
print(json.dumps({
    "backend": f"torch {torch.__version__}",
    "blas": blas_loaded(),
    "threads": torch.get_num_threads(),
    "updateTokensPerS": update_tps, "updateMs": update_s * 1000, "updateTokensPerCpuS": update_cpu_tps,
    "generationTokensPerS": gen_tps, "generationMs": gen_s * 1000, "generationTokensPerCpuS": gen_cpu_tps,
}))
