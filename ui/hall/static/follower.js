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
  // a refused stream (every server restarting behind a balancer) is tried again after a doubling wait,
  // jittered, at most this: a class is back within seconds of the server, never all at once
  const MAX_RETRY_MS = 4000;
  let version = null; // the room version on screen
  let shown = null; // the message on screen
  const mine = {}; // "CODE/question number" -> what this page answered and the reply
  const drafts = {}; // question number -> the number being typed into an exercise
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

  function math(parent, latex, display) {
    if (window.katex) {
      katex.render(latex, parent, { displayMode: display, throwOnError: false, output: "htmlAndMathml" });
    } else {
      parent.textContent = latex;
    }
  }

  function cell(parent, text, markdown) {
    // a table's label or number: $math$ (our own labels), else inline Markdown; plain text as it is
    const whole = markdown && /^\$(.+)\$$/.exec(text);
    if (whole) math(parent, whole[1], false);
    else if (markdown) inline(parent, text);
    else parent.textContent = text;
  }

  function blocks(parent, list) {
    // an exercise card's blocks (figures/exercises.py): text, note, latex, table, code, row
    for (const block of list || []) {
      let node;
      if (block.kind === "text" || block.kind === "note") {
        node = document.createElement("p");
        node.className = block.kind;
        inline(node, block.text);
      } else if (block.kind === "latex") {
        node = document.createElement("div");
        node.className = "latex";
        math(node, block.latex, true);
      } else if (block.kind === "code") {
        node = document.createElement("pre");
        node.textContent = block.code;
      } else if (block.kind === "table") {
        node = document.createElement("div");
        node.className = "table";
        const table = document.createElement("table");
        const head = table.insertRow();
        const labelled = block.rows.some((row) => row[0]);
        if (labelled) head.appendChild(document.createElement("th"));
        for (const column of block.columns) {
          const th = document.createElement("th");
          cell(th, column, false);
          head.appendChild(th);
        }
        for (const [label, cells] of block.rows) {
          const tr = table.insertRow();
          if (labelled) {
            const th = document.createElement("th");
            cell(th, label, block.markdown);
            tr.appendChild(th);
          }
          for (const value of cells) cell(tr.insertCell(), value, block.markdown);
        }
        node.appendChild(table);
      } else if (block.kind === "row") {
        node = document.createElement("div");
        node.className = "row";
        for (const part of block.parts) {
          const column = document.createElement("div");
          blocks(column, part);
          node.appendChild(column);
        }
      } else {
        continue;
      }
      parent.appendChild(node);
    }
  }

  function drawVerdict(box, reply) {
    box.replaceChildren();
    const said = reply.verdict;
    if (!said) {
      box.textContent = reply.said || reply.error || "";
      return;
    }
    const head = document.createElement("p");
    head.className = `verdict ${said.tone}`;
    inline(head, said.text);
    box.appendChild(head);
    if (said.solution && said.solution.length) {
      const title = document.createElement("p");
      inline(title, `**${said.solution_title}**`);
      box.appendChild(title);
      blocks(box, said.solution);
      if (said.model) {
        const model = document.createElement("p");
        model.className = "note";
        inline(model, said.model);
        box.appendChild(model);
      }
    }
    if (reply.said) {
      const counted = document.createElement("p");
      counted.className = "note";
      counted.textContent = reply.said;
      box.appendChild(counted);
    }
  }

  function drawExercise(box, q) {
    const card = q.card || {};
    if (card.missing) {
      const p = document.createElement("p");
      p.textContent = card.missing;
      box.appendChild(p);
      return;
    }
    const body = document.createElement("div");
    body.className = "card";
    blocks(body, card.blocks);
    const form = document.createElement("form");
    form.className = "check";
    const input = document.createElement("input");
    input.type = "text";
    input.inputMode = "decimal";
    input.maxLength = 200;
    input.id = "exercise_answer";
    input.placeholder = say("hall.your_number");
    const button = document.createElement("button");
    button.type = "submit";
    button.id = "exercise_check";
    button.textContent = say("hall.check");
    const rule = document.createElement("p");
    rule.className = "note";
    inline(rule, card.rule || "");
    form.append(input, button);
    const result = document.createElement("div");
    result.id = "question_result";
    result.setAttribute("role", "status");
    const sent = mine[`${hall.code}/${q.number}`];
    if (sent) drawVerdict(result, sent.reply);
    input.value = q.number in drafts ? drafts[q.number] : sent ? sent.typed : "";
    if (q.revealed && q.answer_text) {
      const answer = document.createElement("p");
      inline(answer, q.answer_text);
      result.appendChild(answer);
    }
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      button.disabled = true;
      try {
        const response = await fetch(`/r/${hall.code}/answer?lang=${hall.lang}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ question: q.number, value: input.value }),
          credentials: "same-origin",
        });
        const reply = await response.json();
        if (response.ok) mine[`${hall.code}/${q.number}`] = { typed: input.value, reply };
        drafts[q.number] = input.value;
        drawVerdict(result, reply);
      } catch (e) {
        result.textContent = say("hall.reconnecting");
      }
      button.disabled = false;
    });
    box.append(body, form, rule, result);
  }

  function drawCode(slide) {
    const box = $("code");
    box.replaceChildren();
    if (slide.code == null) return;
    if (slide.code_label) {
      const label = document.createElement("div");
      label.className = "label";
      inline(label, slide.code_label); // our own words, Markdown as on the projector: **The model's answer**
      box.appendChild(label);
    }
    const pre = document.createElement("pre");
    pre.textContent = slide.code;
    box.appendChild(pre);
  }

  function drawQuestion(q) {
    const box = $("question");
    const typing = $("exercise_answer");  // a number being typed survives the room's next message
    if (typing && q && box.dataset.number === String(q.number)) drafts[q.number] = typing.value;
    box.dataset.number = q ? String(q.number) : "";
    box.replaceChildren();
    box.hidden = !q;
    if (!q) return;
    const head = document.createElement("h3");
    head.textContent = say("hall.question");
    const text = document.createElement("p");
    inline(text, q.text);
    box.append(head, text);
    if (q.kind === "exercise") {
      drawExercise(box, q);
      return;
    }
    const list = document.createElement("div");
    list.className = "options";
    const sent = mine[`${hall.code}/${q.number}`];
    q.options.forEach((option, i) => {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = option;
      button.disabled = q.revealed || Boolean(sent);
      if (q.revealed && q.answer === i) button.classList.add("answer");
      if (sent && sent.option === i) button.classList.add("mine");
      if (q.counts) button.dataset.count = q.counts[i];
      button.addEventListener("click", () => send(q.number, i, button));
      list.appendChild(button);
    });
    box.appendChild(list);
    const result = document.createElement("p");
    result.id = "question_result";
    result.setAttribute("role", "status");
    if (q.revealed && q.answer_text) inline(result, q.answer_text);
    else if (sent) result.textContent = sent.said;
    box.appendChild(result);
  }

  async function send(number, option, button) {
    const result = $("question_result");
    for (const other of button.parentNode.children) other.disabled = true;
    try {
      const response = await fetch(`/r/${hall.code}/answer?lang=${hall.lang}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ question: number, option }),
        credentials: "same-origin",
      });
      const reply = await response.json();
      result.textContent = reply.said || reply.error || "";
      if (response.ok) {
        // this page's answer to this question, kept across the room's next messages (a new step)
        mine[`${hall.code}/${number}`] = { option: reply.counted ? option : null, said: reply.said };
        if (reply.counted) button.classList.add("mine");
      } else if (response.status !== 409) {
        for (const other of button.parentNode.children) other.disabled = false;  // try again
      }
    } catch (e) {
      result.textContent = say("hall.reconnecting");
      for (const other of button.parentNode.children) other.disabled = false;
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
    $("note").replaceChildren();
    inline($("note"), slide.note || ""); // a caption on the projector: Markdown too
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
      status("");
      draw(message);
    });
    source.addEventListener("away", (event) => {
      // the room server does not answer: the slide on screen stays, and the page says why it stands still
      status(JSON.parse(event.data).said);
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
        retry = Math.min(retry * 2, MAX_RETRY_MS);
        setTimeout(connect, wait);
      }
    });
  }

  status(say("hall.connecting", { code: hall.code }));
  window.addEventListener("resize", () => shown && shown.slide && window.Plotly && Plotly.Plots.resize($("plot")));
  connect();
})();
