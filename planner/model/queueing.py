"""A replica under load: continuous batching with chunked prefill, Poisson arrivals, time to first token (TTFT)
and time per output token (TPOT) at a percentile (docs/model.md section 10). Analytic, vectorised over
candidate replicas; `simulate` is a step-level simulation of the same engine that checks it (tests).

The engine (vLLM V1, SGLang, TensorRT-LLM in-flight batching) runs steps: each decodes one token of every
running sequence and spends what is left of its token budget K on prefill chunks, first come first served.
With requests of I input and O output tokens on average (independent, of coefficients of variation cv_I and
cv_O) arriving at rate lam, a decode step of B sequences taking T(B) (planner/model/engine.py) and a request's
prefill taking t_p of the replica:

  * prefill takes a share rho = lam t_p of the replica's time, so a sequence gets a token every
    TPOT = T(B) / (1 - rho) on average, and by Little's law B = lam (O - 1) TPOT: the least B solving it
    (T is convex in B, so the fixed point is found by bisection); none below the KV-cache limit: overloaded.
  * a request's TPOT is its mean over its life, in which the batch (Poisson, variance B) and the prefill
    arriving (rho / sqrt(B) for a request of mean length, more for short ones) vary: TPOT (1 + z cv) at the
    percentile's normal quantile z.
  * prefill is a first-come-first-served queue whose work per request is S = t_p + I T(B) / (K - B) (its
    chunks share steps with decode): M/G/1, mean wait rho_q S (1 + cv_I^2) / (2 (1 - rho_q)) at rho_q = lam S
    (at most serve_max_prefill_utilisation), the wait exponential of mean wait / rho_q when there is one.
    TTFT = wait + its own chunks' steps + what is left of the step running at its arrival; at the percentile
    a gamma of the parts' summed mean and variance.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from planner.assumptions import serving as S
from planner.model import engine
from planner.model.engine import DEFAULT, Efficiency, Replicas, Shape

BISECTIONS = 48


@dataclass(frozen=True)
class Requests:
    """The load's request shape: mean input and output tokens of a request, their coefficients of variation
    (standard deviation / mean; 0: every request alike), and the latency percentile. Lengths are independent."""

    input_tokens: int
    output_tokens: int
    percentile: float = 0.9
    input_cv: float = 0.0
    output_cv: float = 0.0

    @property
    def mean_context(self) -> float:
        """Mean context of a decoding sequence: its input and half its output, weighted by the decode steps a
        request spends (E[O I + O^2 / 2] / E[O] = I + O (1 + cv_O^2) / 2 for independent lengths)."""
        return self.input_tokens + self.output_tokens * (1 + self.output_cv**2) / 2

    @property
    def short_lives(self) -> float:
        """(E[O] - 1) E[1 / (O - 1)] over the output lengths (gamma, of O >= 2; 1 when fixed): how much more a
        short request's TPOT varies than one of mean length (queueing.operate)."""
        if not self.output_cv:
            return 1.0
        draws = _lengths(np.random.default_rng(0), self.output_tokens, self.output_cv, 20_000)
        life = draws[draws >= 2] - 1.0
        return float(max(np.mean(life) * np.mean(1.0 / life), 1.0)) if len(life) else 1.0

    @property
    def input_square(self) -> float:
        """E[I^2] / E[I]^2: what attention's quadratic prefill term averages to."""
        return 1 + self.input_cv**2


def operate(
    shape: Shape,
    r: Replicas,
    req: Requests,
    rate,
    eff: Efficiency = DEFAULT,
    max_sequences=None,
    prefill: bool = True,
) -> dict[str, np.ndarray]:
    """Each replica at `rate` requests/s (array): batch, TTFT and TPOT (mean and at the percentile), and
    whether it is stable (prefill and decode keep up within the KV cache). `max_sequences`: the engine's cap
    on the batch when it is not serve_max_sequences (an offline benchmark's), with the KV cache's. `prefill`
    False: a decode-only replica of a disaggregated deployment (its sequences arrive prefilled: rho = 0)."""
    lam = np.asarray(rate, float) * np.ones(len(r.gpus))
    # the docstring's I and O (arrays too: one request shape per replica, as validation evaluates them)
    I, O = np.asarray(req.input_tokens, float), np.asarray(req.output_tokens, float)  # noqa: E741
    t_pre = engine.prefill_s(shape, r, I, eff, req.input_square) * (1.0 if prefill else 0.0)
    rho = lam * t_pre
    cap = engine.max_sequences(shape, r, req.mean_context, max_sequences)
    step = lambda b: engine.decode_step_s(shape, r, b, req.mean_context, eff)["step_s"]  # noqa: E731
    slack = np.maximum(1.0 - rho, 1e-12)
    excess = lambda b: lam * (O - 1) * step(b) / slack - b  # noqa: E731  (convex in b, > 0 at b = 0)
    stable = (rho < 1) & (cap >= 1) & (excess(np.maximum(cap, 0.0)) <= 0)
    lo, hi = np.zeros_like(lam), np.where(stable, cap, 0.0)
    for _ in range(BISECTIONS):
        mid = (lo + hi) / 2
        below = excess(mid) > 0
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    batch = hi
    t_dec = step(batch)
    tpot = t_dec / slack
    # a step carries one request's prefill, or more when more arrive per step than one (k <= K - B)
    budget = engine.token_budget(r)  # per step, over the replica's engines
    chunk = np.clip(np.minimum(budget - batch, np.maximum(I, lam * I * tpot)), 1.0, None)
    extra = chunk * t_pre / I  # a mixed step's prefill time
    mixed = np.clip(lam * I * tpot / chunk, 0.0, 1.0)  # the share of steps that carry prefill
    # a request's TPOT is its mean over its life, in which the batch (Poisson, variance B) and the prefill
    # arriving (Poisson, B arrivals per mean lifetime by Little's law, so rho / sqrt(B); a shorter life sees
    # fewer, so over varying output lengths that variance grows by (E[O] - 1) E[1 / (O - 1)]) vary
    z = NormalDist().inv_cdf(req.percentile)
    spread_b = np.sqrt(np.maximum(batch, 1.0))
    step_cv = (step(batch + spread_b) - t_dec) / t_dec
    prefill_cv = rho / spread_b / slack * np.sqrt(req.short_lives)
    tpot_p = tpot * (1 + z * np.sqrt(step_cv**2 + prefill_cv**2))
    room = np.maximum(budget - batch, 1.0)
    work = t_pre + I * t_dec / room  # replica time per request when steps are full of prefill chunks
    rho_q = lam * work if prefill else np.zeros_like(lam)  # a decode-only replica queues no prefill
    stable &= rho_q <= S.MAX_UTILISATION.value
    slack_q = np.maximum(1.0 - rho_q, 1e-12)
    # M/G/1 (Pollaczek-Khinchine): the wait grows with E[S^2] = E[S]^2 (1 + cv^2), the work ~ the prompt's tokens
    wait = rho_q * work * (1 + req.input_cv**2) / (2 * slack_q)
    theta = wait / np.maximum(rho_q, 1e-12)  # a waiting request's mean wait (the tail is exponential)
    # its chunks' steps; the last carries the other prompts of its step too (a step's typical chunk, `extra`);
    # under ep the request's own attention rank sets how long its prefill takes (engine.prefill_latency_s)
    t_own = engine.prefill_latency_s(shape, r, I, eff, req.input_square) if prefill else np.zeros_like(lam)
    steps = np.maximum(t_pre, extra) + np.ceil(I / room) * t_dec
    own = np.maximum(steps, t_own) if prefill else np.zeros_like(lam)  # (tp: t_own = t_pre, within its steps)
    long = t_dec + extra  # the step running at arrival: pure (t_dec) or mixed, length-biased
    share = mixed * long / (mixed * long + (1 - mixed) * t_dec)  # of the time, in mixed steps
    residual = (share * long + (1 - share) * t_dec) / 2 if prefill else np.zeros_like(lam)
    no_decode = O <= 1
    # TTFT = wait + own service + the step running at arrival, independent parts: a gamma of their summed mean
    # and variance, at the percentile (Wilson-Hilferty). The wait: 0, or with probability rho_q exponential of
    # mean theta; the own service spreads with the prompt's length; the residual ~ uniform over a step.
    wait_var = np.maximum(2 * rho_q * theta**2 - wait**2, 0.0)
    ttft = wait + own + residual
    ttft_var = wait_var + (own * req.input_cv) ** 2 + residual**2 / 3
    ttft_p = _gamma_quantile(ttft, ttft_var, z)
    return {
        "batch": batch,
        "stable": stable,
        "prefill_s": t_pre,
        "step_s": t_dec,
        "ttft_s": ttft,
        "ttft_p_s": ttft_p,
        "tpot_s": np.where(no_decode, 0.0, tpot),
        "tpot_p_s": np.where(no_decode, 0.0, tpot_p),
        "prefill_share": rho,
        "max_sequences": cap,
    }


def _gamma_quantile(mean, variance, z: float) -> np.ndarray:
    """The quantile at normal quantile z of a gamma of this mean and variance (Wilson-Hilferty's cube-root
    normal approximation; the mean itself where the variance is 0)."""
    mean, variance = np.asarray(mean, float), np.asarray(variance, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.where(variance > 0, mean**2 / np.maximum(variance, 1e-300), np.inf)
        cube = np.maximum(1 - 1 / (9 * k) + z / (3 * np.sqrt(k)), 0.0) ** 3
    return np.where(np.isfinite(k), mean * cube, mean)


def prefill_pool(shape: Shape, r: Replicas, req: Requests, rate, eff: Efficiency = DEFAULT) -> dict[str, np.ndarray]:
    """A prefill-only replica of a disaggregated deployment at `rate` requests/s: first come first served,
    each prompt one engine step (ceil(I / K) when longer than the token budget K) of its prefill time alone
    (its compute, or reading the weights when that is longer): M/G/1 with the wait's exponential tail as in
    `operate`; the wait from the replica's time per prompt, its own part from how long one prompt takes (under
    ep, on its attention rank). TTFT here excludes the KV cache's transfer."""
    lam = np.asarray(rate, float) * np.ones(len(r.gpus))
    I = np.asarray(req.input_tokens, float)  # noqa: E741
    steps = np.ceil(I / engine.token_budget(r)) * eff.step_overhead_s
    service = engine.prefill_s(shape, r, I, eff, req.input_square, alone=True) + steps  # the replica's time
    latency = engine.prefill_latency_s(shape, r, I, eff, req.input_square, alone=True) + steps  # one request's
    rho = lam * service
    slack = np.maximum(1.0 - rho, 1e-12)
    wait = rho * service * (1 + req.input_cv**2) / (2 * slack)
    theta = wait / np.maximum(rho, 1e-12)
    wait_var = np.maximum(2 * rho * theta**2 - wait**2, 0.0)
    ttft = wait + latency
    ttft_p = _gamma_quantile(ttft, wait_var + (latency * req.input_cv) ** 2, NormalDist().inv_cdf(req.percentile))
    stable = rho <= S.MAX_UTILISATION.value
    return {"stable": stable, "service_s": service, "ttft_s": ttft, "ttft_p_s": ttft_p}


def max_rate(
    shape: Shape,
    r: Replicas,
    req: Requests,
    ttft_s: float | None,
    tpot_s: float | None,
    eff: Efficiency = DEFAULT,
    max_sequences=None,
    role: str = "both",
) -> dict[str, np.ndarray]:
    """The most requests/s each replica serves within the TTFT and TPOT targets at the percentile (0 where
    none, even alone), and its operating point there. The latencies grow with the rate, so bisection. `role`:
    "both" (prefill and decode on the replica, `operate`), "prefill" (`prefill_pool`; TPOT not its concern) or
    "decode" (`operate` with no prefill on the replica; TTFT not its concern)."""
    n = len(r.gpus)
    if role == "prefill":
        evaluate = lambda rate: prefill_pool(shape, r, req, rate, eff)  # noqa: E731
        hi = 1.0 / evaluate(np.zeros(n))["service_s"]
        tpot_s = None
    else:
        decode_only = role == "decode"
        evaluate = lambda rate: operate(shape, r, req, rate, eff, max_sequences, prefill=not decode_only)  # noqa: E731
        if decode_only:  # at most the KV cache's batch at the shortest step: cap / ((O - 1) T(1))
            cap = engine.max_sequences(shape, r, req.mean_context, max_sequences)
            step = engine.decode_step_s(shape, r, 1.0, req.mean_context, eff)["step_s"]
            hi = np.maximum(cap, 1.0) / (np.maximum(np.asarray(req.output_tokens, float) - 1, 1.0) * step)
            ttft_s = None
        else:  # prefill alone saturates the replica at 1 / t_p
            hi = 1.0 / engine.prefill_s(shape, r, np.asarray(req.input_tokens, float), eff, req.input_square)

    def meets(rate: np.ndarray) -> np.ndarray:
        at = evaluate(rate)
        ok = at["stable"].copy()
        if ttft_s is not None:
            ok &= at["ttft_p_s"] <= ttft_s
        if tpot_s is not None:
            ok &= at["tpot_p_s"] <= tpot_s
        return ok

    lo = np.zeros(n)
    alone = meets(np.full(n, 1e-9) * hi)
    for _ in range(BISECTIONS):
        mid = (lo + hi) / 2
        ok = meets(mid)
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    rate = np.where(alone, lo, 0.0)
    out = evaluate(np.where(alone, rate, 1e-9 * hi))
    out["rate"] = rate
    out["serves"] = alone
    return out


def simulate(
    step_s: Callable[[int], float],
    prefill_s: float,
    req: Requests,
    rate: float,
    max_sequences: int,
    requests: int = 4000,
    seed: int = 0,
    budget: int | None = None,
    own_prefill_s: float = 0.0,
) -> dict[str, float]:
    """Step-level simulation of the engine `operate` approximates: Poisson arrivals at `rate`, each step
    decoding every running sequence (step_s(B)) and filling the rest of the token budget with prefill
    chunks first come first served (prefill_s / input_tokens per token), a sequence admitted while the
    running ones stay under max_sequences. Lengths are gamma-distributed at the request shape's means and
    coefficients of variation (fixed when 0); a prompt's first token comes no sooner than `own_prefill_s` after
    its prefill starts (ep: its own attention rank, engine.prefill_latency_s, for a prompt of mean length). TTFT
    and TPOT (mean and at the percentile) over the requests after the first tenth (warm-up)."""
    budget = int(budget or S.TOKEN_BUDGET.value)
    rng = np.random.default_rng(seed)
    per_token = prefill_s / req.input_tokens
    arrivals = np.cumsum(rng.exponential(1.0 / rate, requests))
    inputs = _lengths(rng, req.input_tokens, req.input_cv, requests)
    outputs = _lengths(rng, req.output_tokens, req.output_cv, requests)
    ttft, tpot = np.full(requests, np.nan), np.full(requests, np.nan)
    first, started = np.zeros(requests), np.full(requests, np.nan)
    finishing: list[tuple[int, int]] = []  # (step of its last token, request), a heap
    queue: list[list] = []  # [request, prefill tokens left], first come first served
    nxt, t, steps, running = 0, 0.0, 0, 0
    busy, sequence_seconds = 0.0, 0.0  # time in steps, and sequences x step time (the mean batch)
    while nxt < requests or queue or running:
        if not queue and not running:
            t = max(t, arrivals[nxt])
        while nxt < requests and arrivals[nxt] <= t:
            queue.append([nxt, int(inputs[nxt])])
            nxt += 1
        room, admitted, done = budget - running, running, []
        used = 0
        for item in queue:
            if used >= room or admitted >= max_sequences:
                break
            if np.isnan(started[item[0]]):
                started[item[0]] = t  # its first chunk's step starts now
            take = min(item[1], room - used)
            item[1] -= take
            used += take
            if item[1] == 0:
                done.append(item[0])
                admitted += 1
        queue = queue[len(done) :] if done else queue
        dt = step_s(running) + used * per_token
        t, busy, sequence_seconds = t + dt, busy + dt, sequence_seconds + running * dt
        steps += 1
        while finishing and finishing[0][0] <= steps:
            _, k = heapq.heappop(finishing)
            tpot[k] = (t - first[k]) / (outputs[k] - 1)
            running -= 1
        for k in done:
            ready = max(t, started[k] + own_prefill_s * inputs[k] / req.input_tokens)
            ttft[k], first[k] = ready - arrivals[k], ready
            if outputs[k] > 1:
                heapq.heappush(finishing, (steps + int(outputs[k]) - 1, k))
                running += 1
    keep = slice(requests // 10, None)
    q = 100 * req.percentile
    return {
        "ttft_s": float(np.nanmean(ttft[keep])),
        "ttft_p_s": float(np.nanpercentile(ttft[keep], q)),
        "tpot_s": float(np.nanmean(tpot[keep])) if np.isfinite(tpot[keep]).any() else 0.0,
        "tpot_p_s": float(np.nanpercentile(tpot[keep], q)) if np.isfinite(tpot[keep]).any() else 0.0,
        "steps": float(steps),
        "mean_batch": sequence_seconds / busy if busy else 0.0,
    }


def _lengths(rng: np.random.Generator, mean: float, cv: float, n: int) -> np.ndarray:
    """n request lengths of this mean and coefficient of variation (gamma; all `mean` when cv is 0), >= 1."""
    if cv <= 0:
        return np.full(n, int(round(mean)))
    shape = 1.0 / cv**2
    return np.maximum(1, np.rint(rng.gamma(shape, mean / shape, n))).astype(int)
