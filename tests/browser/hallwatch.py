"""What a hall page's event stream did, seen from the test (tests/browser/test_cluster.py,
test_hall_restart.py, test_presenter.py, test_rooms_flood.py): an init script wraps the page's
``EventSource`` before ``ui/hall/static/follower.js`` runs and counts the stream's openings, errors and
events, and a mark set on ``window`` tells a page that reconnected by itself from one that was reloaded
(a reload starts a new ``window``, without it)."""

from __future__ import annotations

from playwright.sync_api import BrowserContext, Locator, Page, expect

from i18n import t

# Listeners of our own beside the page's: the page's script is not changed, only watched.
WATCH = """(() => {
  const Native = window.EventSource;
  if (!Native || Native.watched) return;
  const seen = (window.__hallStreams = { opened: 0, errors: 0, events: [], ids: [] });
  class Watched extends Native {
    constructor(url, init) {
      super(url, init);
      this.addEventListener("open", () => { seen.opened += 1; });
      this.addEventListener("error", () => { seen.errors += 1; });
      for (const name of ["hello", "room", "away", "gone"]) {
        this.addEventListener(name, (event) => {
          seen.events.push(name);
          if (name === "room") seen.ids.push(event.lastEventId);
        });
      }
    }
  }
  Watched.watched = true;
  window.EventSource = Watched;
})();"""


def watch(context: BrowserContext) -> BrowserContext:
    """Every page ``context`` opens from now on has its event streams counted (``streams``)."""
    context.add_init_script(WATCH)
    return context


def streams(page: Page) -> dict:
    """{"opened": n, "errors": n, "events": ["hello", "room", ...], "ids": [room event ids]} so far."""
    return page.evaluate("() => window.__hallStreams")


def mark(page: Page) -> None:
    """A mark on this page's ``window``: ``same_page`` is False once the page was loaded again."""
    page.evaluate("() => { window.__hallMark = 'not reloaded'; }")


def same_page(page: Page) -> bool:
    return page.evaluate("() => window.__hallMark === 'not reloaded'")


def hall_status(page: Page) -> Locator:
    """The hall page's status line: empty while the stream flows; "Reconnecting…", "Rooms are
    unavailable …" otherwise."""
    return page.locator("#status")


def says(page: Page, key: str, timeout: float, lang: str = "en", **values) -> None:
    """The hall page's status line says i18n ``key``."""
    _status(page, t(key, lang, **values), timeout)


def quiet(page: Page, timeout: float) -> None:
    """The status line says nothing: the stream is open and the store answers."""
    _status(page, "", timeout)


def _status(page: Page, text: str, timeout: float) -> None:
    try:
        expect(hall_status(page)).to_have_text(text, timeout=timeout)
    except AssertionError as error:  # what the stream did says why
        raise AssertionError(f"{page.url}: {streams(page)}\n{error}") from None
