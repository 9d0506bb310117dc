// The follower's page of a room (ui/hall/routes.py): every slide arrives on the room's event stream
// and is drawn here. Everything from the server is drawn as text (textContent), never as HTML: the
// slide's own Markdown knows **bold** and `code` only, and both become elements holding text.
(() => {
  "use strict";
  const hall = JSON.parse(document.body.dataset.hall);
  const say = (key, values = {}) =>
    (hall.texts[key] || key).replace(/\{(\w+)\}/g, (m, name) => (name in values ? values[name] : m));
  const $ = (id) => document.getElementById(id);
  const RECONNECTING_AFTER_MS = 2000; // a stream down for longer than this says so
  let version = null; // the room version on screen
  let shown = null; // the message on screen
  let left = false;
  let statusTimer = null;
  let retry = 1000;

  function inline(parent, text) {
    // **bold** and `code` in our own texts; every piece is a text node
    for (const part of String(text).split(/(\*\*[^*]+\*\*|`[^`]+`)/)) {
      if (!part) continue;
      let node;
      if (part.startsWith("**") && part.endsWith("**") && part.length > 4) {
        node = document.createElement("strong");
        node.textContent = part.slice(2, -2);
      } else if (part.startsWith("`") && part.endsWith("`") && part.length > 2) {
        node = document.createElement("code");
        node.textContent = part.slice(1, -1);
      } else {
        node = document.createTextNode(part);
      }
      parent.appendChild(node);
    }
  }

  function paragraphs(box, text) {
    box.replaceChildren();
    if (!text) return;
    for (const para of String(text).split(/\n{2,}/)) {
      const p = document.createElement("p");
      inline(p, para);
      box.appendChild(p);
    }
  }

  function status(text) {
    $("status").textContent = text || "";
  }

  function drawFigure(slide) {
    // #figure scrolls sideways; #plot keeps the width the figure was drawn for (its own, or at least
    // MIN_WIDTH), so a phone scrolls instead of crushing the labels together
    const box = $("figure");
    box.classList.toggle("wide", !!slide.wide);
    if (!window.Plotly) return;
    const fig = slide.figure || { data: [], layout: {} };
    const layout = Object.assign({}, fig.layout);
    const plot = $("plot");
    plot.style.width = layout.width ? `${layout.width}px` : "";
    Plotly.react(plot, fig.data || [], layout, { responsive: !layout.width, displaylogo: false,
      displayModeBar: false });
  }

  function drawEquation(latex) {
    const box = $("equation");
    box.replaceChildren();
    if (!latex) return;
    if (window.katex) {
      katex.render(latex, box, { displayMode: true, throwOnError: false, output: "htmlAndMathml" });
    } else {
      box.textContent = latex;
    }
  }

  function drawCode(slide) {
    const box = $("code");
    box.replaceChildren();
    if (slide.code == null) return;
    if (slide.code_label) {
      const label = document.createElement("div");
      label.className = "label";
      label.textContent = slide.code_label;
      box.appendChild(label);
    }
    const pre = document.createElement("pre");
    pre.textContent = slide.code;
    box.appendChild(pre);
  }

  function drawQuestion(q) {
    const box = $("question");
    box.replaceChildren();
    box.hidden = !q;
    if (!q) return;
    const head = document.createElement("h3");
    head.textContent = say("hall.question");
    const text = document.createElement("p");
    inline(text, q.text);
    box.append(head, text);
    const list = document.createElement("div");
    list.className = "options";
    q.options.forEach((option, i) => {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = option;
      button.disabled = q.revealed;
      if (q.revealed && q.answer === i) button.classList.add("answer");
      if (q.counts) button.dataset.count = q.counts[i];
      button.addEventListener("click", () => send(q.number, i, button));
      list.appendChild(button);
    });
    box.appendChild(list);
    const result = document.createElement("p");
    result.id = "question_result";
    result.setAttribute("role", "status");
    if (q.revealed && q.answer_text) inline(result, q.answer_text);
    box.appendChild(result);
  }

  async function send(number, option, button) {
    const result = $("question_result");
    try {
      const response = await fetch(`/r/${hall.code}/answer?lang=${hall.lang}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ question: number, option }),
        credentials: "same-origin",
      });
      const reply = await response.json();
      result.textContent = reply.said || reply.error || "";
      if (response.ok) button.classList.add("mine");
    } catch (e) {
      result.textContent = say("hall.reconnecting");
    }
  }

  function leaveUrl(message, slide) {
    const query = new URLSearchParams(message.settings || {});
    query.set("step", String(slide.step));
    query.set("lang", hall.lang);
    query.set("rejoin", hall.code);
    return `/lecture?${query.toString()}`;
  }

  function draw(message) {
    shown = message;
    const room = message.room || {};
    $("room").textContent = say("hall.room", { code: hall.code });
    document.documentElement.lang = message.lang === "zh" ? "zh-CN" : "en";
    const slide = message.slide;
    if (!slide) {
      $("heading").textContent = "";
      paragraphs($("text"), message.said || "");
      if (window.Plotly) Plotly.purge($("plot"));
      drawEquation(null);
      drawCode({});
      drawQuestion(room.ended ? null : message.question);
      $("note").textContent = "";
      $("leave").hidden = true;
      return;
    }
    $("heading").textContent = slide.heading;
    drawFigure(slide);
    paragraphs($("text"), slide.text);
    drawEquation(slide.latex);
    drawCode(slide);
    drawQuestion(message.question);
    $("note").textContent = slide.note || "";
    const leave = $("leave");
    leave.hidden = false;
    leave.textContent = say("hall.leave");
    leave.href = leaveUrl(message, slide);
  }

  function connect() {
    const last = version == null ? "" : `&last=${version}`;
    const source = new EventSource(`/r/${hall.code}/events?lang=${hall.lang}${last}`);
    source.addEventListener("open", () => {
      clearTimeout(statusTimer);
      statusTimer = null;
      retry = 1000;
      status("");
    });
    source.addEventListener("room", (event) => {
      const message = JSON.parse(event.data);
      version = message.room ? message.room.version : version;
      draw(message);
    });
    source.addEventListener("gone", (event) => {
      draw({ said: JSON.parse(event.data).said, room: { ended: true } });
      source.close();
    });
    source.addEventListener("error", () => {
      if (statusTimer == null) {
        statusTimer = setTimeout(() => status(say("hall.reconnecting")), RECONNECTING_AFTER_MS);
      }
      if (source.readyState === EventSource.CLOSED) {
        // refused (the server answered with an error): try again later, each follower at its own time
        const wait = retry * (0.5 + Math.random());
        retry = Math.min(retry * 2, 30000);
        setTimeout(connect, wait);
      }
    });
  }

  status(say("hall.connecting", { code: hall.code }));
  window.addEventListener("resize", () => shown && shown.slide && window.Plotly && Plotly.Plots.resize($("plot")));
  connect();
})();
