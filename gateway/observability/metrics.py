"""Prometheus metrics: every metric object of mnemogate and the one-line hooks that move them.

Call sites elsewhere are one line each (``metrics.tool_call(name, output)``); a hook never
raises into the code that calls it. Label values are bounded: platform, model, tool (names
the model did not get become ``unknown``), provider and operation names, job kinds and
outcomes — never a tenant id, chat id or text.

Forking RQ workers run each job in a child process (a *work horse*) whose memory is thrown
away when the job ends. :func:`record_events` makes the hooks also append their arguments to
a list in the horse; the horse writes that list to a file and the parent worker — the
process that serves ``/metrics`` and lives across jobs — replays it with :func:`replay`, so
a job's provider calls, model tokens and memory writes are counted where they are scraped.

Gauges that describe shared state (queue depth, outbox backlog, workers) are read at scrape
time by :mod:`gateway.observability.collectors`; :data:`SCRAPED` names them.
"""

from __future__ import annotations

import contextvars
import functools
import json
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from prometheus_client import Counter, Histogram

log = logging.getLogger(__name__)
turn_log = logging.getLogger("gateway.turns")
F = TypeVar("F", bound=Callable[..., None])

_LATENCY = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)

TURNS = Counter("mnemogate_turns", "Model turns by platform and outcome", ["platform", "outcome"])
TURN_SECONDS = Histogram(
    "mnemogate_turn_seconds",
    "Turn latency: total, time spent waiting for the model, and our own overhead",
    ["part"],
    buckets=_LATENCY,
)
# every turn observes these three: resolve the children once
_TOTAL, _MODEL, _OVERHEAD = (TURN_SECONDS.labels(part) for part in ("total", "model", "overhead"))
TOKENS = Counter("mnemogate_llm_tokens", "Model tokens by model and kind", ["model", "kind"])
LLM_REQUESTS = Counter("mnemogate_llm_requests", "Model requests answered, by model", ["model"])
TOOL_CALLS = Counter("mnemogate_tool_calls", "Tool calls by tool and outcome", ["tool", "outcome"])
MEMORY_WRITES = Counter(
    "mnemogate_memory_writes",
    "Curated-memory writes: applied, staged for approval or refused (with the refusal category)",
    ["outcome", "category"],
)
RECALL_LOOKUPS = Counter(
    "mnemogate_recall_lookups", "Recall cache reads by a turn: hit or miss", ["result"]
)
RECALL_WAITS = Counter(
    "mnemogate_recall_first_turn_waits",
    "Cold first turns that waited for a recall job: ready in time or not",
    ["outcome"],
)
PROVIDER_CALLS = Counter(
    "mnemogate_provider_calls",
    "Memory provider calls by provider, operation and outcome",
    ["provider", "op", "outcome"],
)
PROVIDER_SECONDS = Histogram(
    "mnemogate_provider_call_seconds",
    "Memory provider call latency",
    ["provider", "op"],
    buckets=_LATENCY,
)
JOBS = Counter("mnemogate_jobs", "Background jobs by kind and outcome", ["kind", "outcome"])
JOB_SECONDS = Histogram(
    "mnemogate_job_seconds", "Background job duration", ["kind"], buckets=_LATENCY
)
LIMIT_REFUSALS = Counter(
    "mnemogate_limit_refusals", "Messages refused by the rate limit or token budget", ["limit"]
)
PAIRING_REQUESTS = Counter(
    "mnemogate_pairing_requests", "Pairing codes handed to unknown users", ["platform"]
)
DUPLICATES_SKIPPED = Counter(
    "mnemogate_update_duplicates_skipped",
    "Platform updates skipped because the update ledger had them already",
    ["platform"],
)

# Gauges read at scrape time (collectors.py), by exported name.
SCRAPED = (
    "mnemogate_up",
    "mnemogate_ready",
    "mnemogate_queue_depth",
    "mnemogate_queue_oldest_job_age_seconds",
    "mnemogate_queue_failed_jobs",
    "mnemogate_workers",
    "mnemogate_outbox_backlog",
    "mnemogate_outbox_oldest_age_seconds",
)

# --- event recording for forked work horses -----------------------------------------------
_HOOKS: dict[str, Callable[..., None]] = {}
_events: list[tuple[str, tuple[Any, ...]]] | None = None


def _hook(fn: F) -> F:
    """Register ``fn`` for replay; make it safe to call (never raises) and recordable."""
    _HOOKS[fn.__name__] = fn

    @functools.wraps(fn)
    def safe(*args: Any) -> None:
        if _events is not None:
            _events.append((fn.__name__, args))
        try:
            fn(*args)
        except Exception:  # a metric must never cost a turn or a job
            log.debug("metric hook %s failed", fn.__name__, exc_info=True)

    return safe  # type: ignore[return-value]


def _safe(fn: F) -> F:
    """For hooks that only compute labels before calling a recorded one: never raise."""

    @functools.wraps(fn)
    def safe(*args: Any, **kwargs: Any) -> None:
        try:
            fn(*args, **kwargs)
        except Exception:
            log.debug("metric hook %s failed", fn.__name__, exc_info=True)

    return safe  # type: ignore[return-value]


def record_events() -> None:
    """From now on (in a work horse) remember every hook call for :func:`write_events`."""
    global _events
    _events = []


def write_events(path: Path) -> None:
    """Write the remembered hook calls to ``path`` (atomically), for the parent to replay."""
    global _events
    events, _events = _events or [], None
    tmp = path.with_suffix(".tmp")
    tmp.write_text("\n".join(json.dumps([name, list(args)]) for name, args in events))
    tmp.replace(path)


def replay(path: Path) -> int:
    """Apply the hook calls a work horse wrote to ``path``, then remove it; how many."""
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        return 0
    path.unlink(missing_ok=True)
    count = 0
    for line in lines:
        try:
            name, args = json.loads(line)
            hook = _HOOKS[name]
        except (ValueError, KeyError, TypeError):
            log.warning("metrics: skipped an unreadable event from a work horse")
            continue
        try:
            hook(*args)
            count += 1
        except Exception:
            log.debug("replaying metric %s failed", name, exc_info=True)
    return count


# --- turns -------------------------------------------------------------------------------
class TurnTimer:
    """One turn's outcome and the seconds its model requests took (summed by llm_call)."""

    def __init__(self) -> None:
        self.outcome = "ok"
        self.model_s = 0.0

    def result(self, value: Any) -> Any:
        """Pass a TurnResult through, noting a model failure it reports."""
        if getattr(value, "error", None):
            self.outcome = "llm_error"
        return value


_turn: contextvars.ContextVar[TurnTimer | None] = contextvars.ContextVar("turn", default=None)


@contextmanager
def turn(platform: str) -> Iterator[TurnTimer]:
    """Time one turn: total, model and overhead; count it by platform and outcome."""
    from gateway.errors import UserInputError  # lazy: errors imports nothing of ours

    timer = TurnTimer()
    token = _turn.set(timer)
    started = time.perf_counter()
    try:
        yield timer
    except UserInputError:
        timer.outcome = "input_error"
        raise
    except BaseException:
        timer.outcome = "error"
        raise
    finally:
        _turn.reset(token)
        total = time.perf_counter() - started
        _turn_done(platform, timer.outcome, total, timer.model_s)
        # one line per turn for operators: figures only, never the text
        turn_log.info("turn %s in %.3fs (model %.3fs)", timer.outcome, total, timer.model_s)


@_hook
def _turn_done(platform: str, outcome: str, total_s: float, model_s: float) -> None:
    TURNS.labels(platform, outcome).inc()
    if outcome == "input_error":
        return  # refused before any work: no latency to speak of
    _TOTAL.observe(total_s)
    _MODEL.observe(model_s)
    _OVERHEAD.observe(max(0.0, total_s - model_s))


@_safe
def llm_call(model: str | None, usage: Any, seconds: float) -> None:
    """One answered model request: tokens by model; its time counts as the turn's model time."""
    timer = _turn.get()
    if timer is not None:
        timer.model_s += seconds
    _llm(model or "unknown", usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens)


@_hook
def _llm(model: str, prompt: int, completion: int, cached: int) -> None:
    LLM_REQUESTS.labels(model).inc()
    TOKENS.labels(model, "in").inc(prompt)
    TOKENS.labels(model, "out").inc(completion)
    if cached:
        TOKENS.labels(model, "cached").inc(cached)


# --- tools and memory --------------------------------------------------------------------
@_safe
def tool_call(name: str, output: str) -> None:
    """A tool call the loop ran; ``output`` is the tool's JSON answer."""
    try:
        failed = json.loads(output).get("success") is False
    except (ValueError, AttributeError):
        failed = False
    _tool(name, "error" if failed else "ok")


@_hook
def _tool(name: str, outcome: str) -> None:
    TOOL_CALLS.labels(name, outcome).inc()


@_safe
def memory_write(result: Any, *, staged: bool = False) -> None:
    """A memory tool call's WriteResult: applied, staged, or refused (why, as a category)."""
    if staged:
        _memory("staged", "none")
    elif not result.success:
        _memory("refused", _category(getattr(result, "rule", None)))
    elif result.changed:
        _memory("applied", "none")


@_hook
def _memory(outcome: str, category: str) -> None:
    MEMORY_WRITES.labels(outcome, category).inc()


@functools.cache
def _rule_categories() -> dict[str, str]:
    from gateway.security.patterns import RULES

    return {rule.name: rule.category for rule in RULES}


def _category(rule: str | None) -> str:
    """The scanner category of a refusal's rule; ``invalid`` for refusals the scanner did not
    make (no match, over the limit, bad arguments)."""
    if not rule:
        return "invalid"
    return _rule_categories().get(rule, "other")


# --- recall, providers, jobs ---------------------------------------------------------------
@_hook
def recall_lookup(hit: bool) -> None:
    RECALL_LOOKUPS.labels("hit" if hit else "miss").inc()


@_hook
def recall_wait(arrived: bool) -> None:
    RECALL_WAITS.labels("ready" if arrived else "timeout").inc()


@_hook
def provider_call(provider: str, op: str, outcome: str, seconds: float) -> None:
    PROVIDER_CALLS.labels(provider, op, outcome).inc()
    PROVIDER_SECONDS.labels(provider, op).observe(seconds)


@contextmanager
def job(kind: str) -> Iterator[None]:
    """Time a job run in this process (inline mode): ``ok``, or ``failed`` if it raises."""
    started, outcome = time.perf_counter(), "failed"
    try:
        yield
        outcome = "ok"
    finally:
        job_done(kind, outcome, time.perf_counter() - started)


@_hook
def job_done(kind: str, outcome: str, seconds: float) -> None:
    JOBS.labels(kind, outcome).inc()
    JOB_SECONDS.labels(kind).observe(seconds)


# --- the gateway's front door ------------------------------------------------------------
@_hook
def limit_refusal(limit: str) -> None:
    LIMIT_REFUSALS.labels(limit).inc()


@_hook
def pairing_request(platform: str) -> None:
    PAIRING_REQUESTS.labels(platform).inc()


@_hook
def duplicate_update(platform: str) -> None:
    DUPLICATES_SKIPPED.labels(platform).inc()


def exported_names() -> set[str]:
    """Every metric name a scrape can show (for the dashboard test), incl. scrape-time ones."""
    names = set(SCRAPED)
    for metric in (
        TURNS,
        TURN_SECONDS,
        TOKENS,
        LLM_REQUESTS,
        TOOL_CALLS,
        MEMORY_WRITES,
        RECALL_LOOKUPS,
        RECALL_WAITS,
        PROVIDER_CALLS,
        PROVIDER_SECONDS,
        JOBS,
        JOB_SECONDS,
        LIMIT_REFUSALS,
        PAIRING_REQUESTS,
        DUPLICATES_SKIPPED,
    ):
        for family in metric.describe():
            suffixes: tuple[str, ...] = ("_total", "_created")
            if family.type == "histogram":
                suffixes = ("_bucket", "_sum", "_count", "_created")
            names.update(family.name + suffix for suffix in suffixes)
    return names
