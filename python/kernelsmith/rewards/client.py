"""Stdlib HTTP client of `kernelsmith serve`'s POST /v1/reward."""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from typing import Any, Mapping, Sequence

DEFAULT_URL = "http://127.0.0.1:8080"


class RewardServiceError(RuntimeError):
    """The service refused a request for good (bad input) or stayed unreachable."""


def service_url(url: str | None = None) -> str:
    return (url or os.environ.get("KS_REWARD_URL") or DEFAULT_URL).rstrip("/")


def ground_truth_text(ground_truth: Any) -> str | dict:
    """A ground truth as the service takes it: the exported JSON string or a dict."""
    if isinstance(ground_truth, (str, dict)):
        return ground_truth
    if isinstance(ground_truth, Mapping):
        return dict(ground_truth)
    raise TypeError(
        f"ground truth must be the JSON string `kernelsmith export rl` writes (or a dict), "
        f"got {type(ground_truth).__name__}"
    )


class RewardClient:
    """Posts batches to /v1/reward.

    A 429 (queue full) or 503 is retried after the server's Retry-After for up to
    ``max_wait_s``; connection errors are retried ``retries`` times. A 400 raises at once:
    it names the bad field.
    """

    def __init__(
        self,
        url: str | None = None,
        timeout_s: float = 1800.0,
        max_wait_s: float = 3600.0,
        retries: int = 3,
    ) -> None:
        self.url = service_url(url)
        self.timeout_s = timeout_s
        self.max_wait_s = max_wait_s
        self.retries = retries

    def post(self, path: str, body: dict) -> dict:
        data = json.dumps(body).encode()
        waited = 0.0
        failures = 0
        while True:
            request = urllib.request.Request(
                self.url + path, data=data, headers={"Content-Type": "application/json"}
            )
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    return json.loads(response.read())
            except urllib.error.HTTPError as e:
                detail = e.read().decode(errors="replace")
                if e.code in (429, 503) and waited < self.max_wait_s:
                    delay = float(e.headers.get("Retry-After") or 1)
                    time.sleep(delay)
                    waited += delay
                    continue
                raise RewardServiceError(f"{self.url}{path}: HTTP {e.code}: {detail}") from None
            except (urllib.error.URLError, ConnectionError, TimeoutError) as e:
                failures += 1
                if failures > self.retries:
                    raise RewardServiceError(
                        f"{self.url}{path}: {e}; is `kernelsmith serve` running there?"
                    ) from None
                time.sleep(min(2.0**failures, 10.0))

    def score(
        self, completions: Sequence[str], ground_truths: Sequence[Any], include_eval: bool = False
    ) -> list[dict]:
        """Per-item results of /v1/reward (each has ``reward``, ``status``, ...)."""
        if len(completions) != len(ground_truths):
            raise ValueError(
                f"{len(completions)} completions but {len(ground_truths)} ground truths"
            )
        if not completions:
            return []
        items = [
            {"completion": c, "ground_truth": ground_truth_text(g)}
            for c, g in zip(completions, ground_truths)
        ]
        body: dict = {"items": items}
        if include_eval:
            body["include_eval"] = True
        return self.post("/v1/reward", body)["results"]

    def rewards(self, completions: Sequence[str], ground_truths: Sequence[Any]) -> list[float]:
        return [float(r["reward"]) for r in self.score(completions, ground_truths)]
