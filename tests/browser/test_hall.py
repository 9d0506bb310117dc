"""The lecture hall's routes on a real server: they refuse bad input (a malformed or unknown code, a
malformed, huge or flooding answer, any path outside their files) with a status and a message in the
follower's language, never a traceback. Students following in Chromium: tests/browser/test_classroom.py."""

from __future__ import annotations

import html
import json
import urllib.error
import urllib.request

import pytest

from i18n import t

pytestmark = pytest.mark.browser


def request(url: str, data: bytes | None = None) -> tuple[int, str]:
    req = urllib.request.Request(url, data=data, headers={"content-type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_the_routes_refuse_bad_input_with_a_status_and_a_message(app_url: str):
    status, body = request(f"{app_url}/r/not-a-room")
    assert status == 400 and html.escape(t("hall.bad_code", "en")) in body and "<script" not in body
    status, body = request(f"{app_url}/r/ABCDEF?lang=zh")
    assert status == 404 and html.escape(t("hall.unknown", "zh", code="ABCDEF")) in body
    status, body = request(f"{app_url}/r/ABCDEF/answer", b"{not json")
    assert status == 400 and json.loads(body)["error"] == t("hall.bad_request", "en")
    status, body = request(f"{app_url}/r/ABCDEF/answer", b'{"question": 1, "option": 0}')
    assert status == 404 and "ABCDEF" in json.loads(body)["error"]
    status, body = request(f"{app_url}/r/ABCDEF/answer", b"x" * 100_000)
    assert status == 400
    for path in ("/hall/../../app.py", "/hall/fonts/..%2F..%2Fapp.py", "/hall/app.py"):
        status, body = request(app_url + path)
        assert status in (400, 404) and "import" not in body, path  # refused, never a file of ours
    statuses = [request(f"{app_url}/r/ABCDEF/answer", b"{}")[0] for _ in range(40)]
    assert 429 in statuses  # a flood from one client is cut
    assert "Traceback" not in body
