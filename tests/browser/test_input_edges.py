"""Input a real browser can send and AppTest cannot: a lone surrogate, a file over the upload limit
(issue 25, findings 7 and 9).

- A JavaScript string may hold half of a UTF-16 pair. Streamlit's browser code wrote it as bytes that
  are not UTF-8, the server refused the whole message ("String field had bad UTF-8") and dropped the
  rerun: the sidebar showed the new sentence, the page the old one. ``ui/page/transport.py`` mends it.
- A file over the uploader's limit is refused by the browser (Streamlit's red note under the box) and
  never reaches the server, which sees no file: the page's message names the limit.
"""

from __future__ import annotations

import re

import pytest
from browserhelpers import settled
from playwright.sync_api import Page, expect

from i18n import t

pytestmark = pytest.mark.browser

TIMEOUT = 60_000

TYPE_INTO_SENTENCE = """(text) => {
    // As a keyboard or a paste would: set the value React sees, then the input event.
    const box = document.querySelector('.st-key-sentence textarea');
    Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set.call(box, text);
    box.dispatchEvent(new Event('input', { bubbles: true }));
}"""


def test_a_lone_surrogate_in_the_sentence_still_reruns_the_page(page: Page, app_url: str):
    page.goto(f"{app_url}/?weights=random")  # the Overview shows the sentence as the model reads it
    settled(page)
    box = page.locator(".st-key-sentence textarea")
    box.click()
    page.evaluate(TYPE_INTO_SENTENCE, "ab\ud800cd")  # Playwright passes the lone half as it is
    box.press("Control+Enter")
    # the rerun happened: the sentence is in the URL and back in the box, the half a U+FFFD ...
    expect(page).to_have_url(re.compile(r"sentence=ab%EF%BF%BDcd"), timeout=TIMEOUT)
    settled(page)
    expect(box).to_have_value("ab\ufffdcd")
    # ... and the page was drawn from it
    shown = page.get_by_test_id("stMain").get_by_test_id("stCode").filter(has_text="ab\ufffdcd")
    expect(shown).not_to_have_count(0)
    expect(page.get_by_test_id("stException")).to_have_count(0)


def test_a_file_over_the_limit_is_named_as_too_big_with_the_limit(page: Page, app_url: str):
    page.goto(f"{app_url}/tokenization?weights=random&tok_source=upload")
    settled(page)
    limit = 1  # MB: pages/tokenization.py's UPLOAD_MB (server.maxUploadSize is larger)
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(
        {"name": "big.txt", "mimeType": "text/plain", "buffer": b"a" * (10 * 1024 * 1024)}
    )
    expect(page.get_by_text(re.compile(r"File must be 1\.0MB or smaller"))).to_be_visible(timeout=TIMEOUT)
    settled(page)
    said = t("tokenization.upload.none_limit", "en", mb=limit)
    expect(page.get_by_test_id("stAlert").filter(has_text=said)).to_have_count(1, timeout=TIMEOUT)
