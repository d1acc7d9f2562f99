"""JOBDIR pause and resume, one process, Scrapy's own scheduler (no scrapy-redis): requests waiting for an origin's
robots.txt when the crawl is paused go into the job's disk queue instead of being dropped, and the resumed crawl
checks them."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import pytest_twisted

from tests.servers import Reply, robots

from .harness import RULES, Events, Origins, Worker, scrapy_stat

pytestmark = pytest.mark.slow

ALLOWED = [f"/page/{n}" for n in range(8)]
DISALLOWED = ["/private/8", "/private/9"]


@pytest_twisted.ensureDeferred
async def test_a_paused_job_keeps_its_waiting_requests_and_the_resumed_job_crawls_them_once(
        tmp_path: Path, events: Events, origins: Origins, workers: list[Worker]) -> None:
    """Run 1: robots.txt answers 503 (temporary full disallow), the requests wait, one SIGINT pauses the job: they
    go back to the scheduler's disk queue (``rep/requests/requeued/closing``), none is dropped. robots.txt then
    answers 200; run 2 on the same JOBDIR crawls every allowed page exactly once across both runs, no disallowed
    one."""
    answer = [Reply(status=503)]
    site = origins.add([lambda request: answer[0]], ALLOWED + DISALLOWED)
    urls = ",".join(origins.url(site, path) for path in ALLOWED + DISALLOWED)
    settings = {"JOBDIR": tmp_path / "job", "REP_UNAVAILABLE_RETRY_DELAY": 60, "RETRY_ENABLED": False,
                "LOGSTATS_INTERVAL": 0}

    def run(name: str) -> Worker:
        worker = Worker(name, events, "", settings, spider_args={"start_url": urls}, spider="catalog",
                        settings_module="example_project.settings")
        workers.append(worker)
        return worker.start()

    first = run("worker-1")
    await first.wait_line("robots.txt: ", 20)  # the held-requests line: they wait for the 503 origin
    await first.interrupt()
    assert await first.wait_exit(30) == 0, first.log_tail()
    assert not [hit for hit in site.hits if hit.path != "/robots.txt"]
    assert scrapy_stat(first.lines, "rep/requests/requeued/closing") > 0, first.log_tail()
    assert scrapy_stat(first.lines, "rep/requests/dropped_after_hold") == 0, first.log_tail()

    answer[0] = robots(RULES)
    second = run("worker-2")
    assert await second.wait_exit(30) == 0, second.log_tail()
    assert second.saw("Resuming crawl"), second.log_tail()
    served = Counter(hit.path for hit in site.hits if hit.path != "/robots.txt")
    logs = f"{first.log_tail()}\n\n{second.log_tail()}"
    assert dict(served) == dict.fromkeys(ALLOWED, 1), logs
    assert site.hits_for("/robots.txt") == 2
