// The lecture's keys, queued: every press is kept in a list with a per-tab increasing number, and
// the whole list (the last MAX presses) is the component's state value. Streamlit may merge several
// updates that arrive while a rerun is pending; the newest value still holds every press, and the
// server applies each press it has not applied yet, in order (ui/keys.py).
//
// One keydown listener per tab, on the app's own window (a v2 component is drawn in the page, not in
// an iframe). It lives on the window, not on one instance: once no instance is live, presses wait
// for the next one while the page's key container (data.host) is still there; when it is gone (the
// page changed: PageDown scrolls again on the other pages) the listener is removed.
const MAX = 100;
const NEXT = { PageDown: 1, ArrowRight: 1, " ": 1, PageUp: -1, ArrowLeft: -1 };
// Keys typed into these belong to them (text, sliders, tabs, menus), as with Streamlit's shortcuts.
const OWN_KEYS =
  'input, textarea, select, [contenteditable=""], [contenteditable="true"], [role="textbox"], ' +
  '[role="slider"], [role="tab"], [role="listbox"], [role="combobox"], [role="menu"], ' +
  '[role="menuitem"], [role="option"], [role="radiogroup"], [role="radio"], [role="spinbutton"]';
// Space on a focused control clicks it (the browser's own action): never a second, keyed move.
const CLICKS = 'button, a[href], summary, [role="button"], [role="checkbox"], [role="switch"], [role="link"]';

function owned(event) {
  const target = event.composedPath ? event.composedPath()[0] : event.target;
  if (!(target instanceof Element)) return false;
  if (target.isContentEditable || target.closest(OWN_KEYS)) return true;
  return event.key === " " && target.closest(CLICKS) !== null;
}

const GRACE = 500; // ms between checks, once no instance is live, that the page is still there

export default function (component) {
  const { data, setStateValue } = component;
  const keys = (window.__glassboxStepKeys ??= {
    seq: 0, presses: [], session: null, listener: null, live: [], unsent: false, closing: null,
  });
  const session = data && typeof data.session === "string" ? data.session : null;
  if (keys.session !== session) {
    // A new server session has applied none of the old presses: they are not sent to it.
    keys.session = session;
    keys.presses = [];
    keys.unsent = false;
  }
  // Instances mount and unmount in any order (a rerun can replace the element, and an older
  // instance's cleanup can run after a newer one mounted): the listener stays while any is live.
  const me = { send: setStateValue };
  keys.live.push(me);
  clearTimeout(keys.closing);
  keys.closing = null;
  if (!keys.listener) {
    keys.listener = (event) => {
      const move = NEXT[event.key];
      if (move === undefined || event.defaultPrevented || event.repeat) return;
      if (event.ctrlKey || event.metaKey || event.altKey || event.shiftKey || owned(event)) return;
      event.preventDefault(); // no scrolling: the key moves the lecture
      keys.seq += 1;
      keys.presses.push({ seq: keys.seq, move });
      if (keys.presses.length > MAX) keys.presses.splice(0, keys.presses.length - MAX);
      flush(keys);
    };
    window.addEventListener("keydown", keys.listener);
  }
  if (keys.unsent) flush(keys); // pressed while no instance was live
  const host = data && typeof data.host === "string" ? data.host : null;
  return () => {
    keys.live = keys.live.filter((other) => other !== me);
    if (keys.live.length || keys.closing) return;
    const before = keys.seq;
    const check = () => {
      keys.closing = null;
      if (keys.live.length) return;
      // A rerun that replaces the element keeps the page's container: wait for the new instance,
      // however long its script takes to load. The container gone means the page changed.
      if (host && document.querySelector(`.${CSS.escape(host)}`)) {
        keys.closing = setTimeout(check, GRACE);
        return;
      }
      window.removeEventListener("keydown", keys.listener);
      keys.listener = null;
      keys.presses = keys.presses.filter((press) => press.seq <= before); // not the lecture's
      keys.unsent = false;
    };
    keys.closing = setTimeout(check, GRACE);
  };
}

function flush(keys) {
  const newest = keys.live[keys.live.length - 1];
  keys.unsent = !newest;
  if (newest) newest.send("presses", keys.presses.slice());
}
