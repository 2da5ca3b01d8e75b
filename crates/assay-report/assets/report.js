// The samples table and detail view of an assay report. Every text from
// the run goes into the page through textContent or setAttribute, never
// as markup.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("assay-data").textContent);
  var outputs = data.outputs;
  var samples = data.samples;
  var FIELDS = ["user_input", "response", "retrieved_contexts", "reference", "references", "reference_contexts",
    "chatbot_role", "reference_topics", "reference_tool_calls"];
  var RANK = { scored: 0, skipped: 1, failed: 2 };
  var tbody = document.querySelector("#samples tbody");
  var filterBox = document.getElementById("filter");
  var statusBox = document.getElementById("status-filter");
  var detail = document.getElementById("detail");
  var sort = { column: null, dir: 1 };

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  // A field's item as text: tool calls as their JSON.
  function plain(x) {
    return x !== null && typeof x === "object" ? JSON.stringify(x) : x;
  }

  // A sample's status is its worst outcome's.
  samples.forEach(function (s) {
    var worst = "scored";
    var text = [s.id];
    Object.keys(s.outcomes).forEach(function (k) {
      var st = s.outcomes[k].status;
      if (RANK[st] > RANK[worst]) worst = st;
    });
    if (s.fields) {
      FIELDS.forEach(function (f) {
        if (s.fields[f] !== undefined) text.push([].concat(s.fields[f]).map(plain).join("\n"));
      });
      (s.fields.messages || []).forEach(function (m) { if (m.content) text.push(m.content); });
    }
    s.status = worst;
    s.haystack = text.join("\n").toLowerCase();
  });

  data.notes.forEach(function (n) {
    document.getElementById("notes").appendChild(el("p", n, "note"));
  });

  // Columns: id, row, status, then one per output.
  var columns = [
    { name: "id", key: function (s) { return s.id; }, text: function (s) { return s.id; } },
    { name: "row", key: function (s) { return s.row; }, text: function (s) { return s.row; } },
    { name: "status", key: function (s) { return RANK[s.status]; }, text: function (s) { return s.status; } }
  ].concat(outputs.map(function (name) {
    return {
      name: name,
      // Unscored outcomes sort after every score, in both directions.
      key: function (s) {
        var o = s.outcomes[name];
        return o && o.status === "scored" ? o.value : null;
      },
      text: function (s) {
        var o = s.outcomes[name];
        if (!o) return "–";
        if (o.status === "scored") return o.value.toFixed(3);
        if (o.status === "failed") return "failed: " + o.error.kind;
        return "skipped";
      },
      cls: function (s) {
        var o = s.outcomes[name];
        return o ? "num st-" + o.status : "num";
      }
    };
  }));

  var headRow = el("tr");
  columns.forEach(function (c, i) {
    var th = el("th", c.name);
    th.addEventListener("click", function () {
      sort.dir = sort.column === i ? -sort.dir : 1;
      sort.column = i;
      headRow.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", sort.dir > 0 ? "ascending" : "descending");
      render();
    });
    headRow.appendChild(th);
  });
  document.querySelector("#samples thead").appendChild(headRow);

  function compare(a, b) {
    var key = columns[sort.column].key;
    var x = key(a), y = key(b);
    if (x === null || y === null) return (x === null) - (y === null);
    if (typeof x === "string") return sort.dir * x.localeCompare(y, undefined, { numeric: true });
    return sort.dir * (x - y);
  }

  function render() {
    var needle = filterBox.value.trim().toLowerCase();
    var status = statusBox.value;
    var shown = samples.filter(function (s) {
      if (needle && s.haystack.indexOf(needle) < 0) return false;
      if (!status) return true;
      return Object.keys(s.outcomes).some(function (k) { return s.outcomes[k].status === status; });
    });
    if (sort.column !== null) shown.sort(compare);
    tbody.replaceChildren();
    shown.forEach(function (s) {
      var tr = el("tr");
      tr.setAttribute("data-row", s.row);
      tr.tabIndex = 0;
      columns.forEach(function (c) {
        tr.appendChild(el("td", c.text(s), c.cls ? c.cls(s) : undefined));
      });
      tr.addEventListener("click", function () { select(tr, s); });
      tr.addEventListener("keydown", function (e) { if (e.key === "Enter") select(tr, s); });
      tbody.appendChild(tr);
    });
    document.getElementById("count").textContent = shown.length + " of " + samples.length + " samples";
  }

  function select(tr, s) {
    tbody.querySelectorAll("tr.selected").forEach(function (r) { r.classList.remove("selected"); });
    tr.classList.add("selected");
    show(s);
    detail.scrollTop = 0;
    detail.scrollIntoView({ block: "nearest" });
  }

  // Details of judged metrics: objects become definition lists; a list of
  // items with a verdict becomes the verdicts with their reasons.
  function tree(v) {
    if (Array.isArray(v)) {
      if (v.length && v.every(function (x) { return x && typeof x === "object" && "verdict" in x; })) {
        var ul = el("ul", null, "verdicts");
        v.forEach(function (item) {
          var li = el("li");
          li.appendChild(el("span", item.verdict, "badge " + item.verdict));
          Object.keys(item).forEach(function (k) {
            if (k !== "verdict" && k !== "reason") li.appendChild(el("span", item[k] + " "));
          });
          if (item.reason !== undefined) li.appendChild(el("div", item.reason, "reason"));
          ul.appendChild(li);
        });
        return ul;
      }
      var ol = el("ol");
      v.forEach(function (x) { var li = el("li"); li.appendChild(tree(x)); ol.appendChild(li); });
      return ol;
    }
    if (v && typeof v === "object") {
      var dl = el("dl", null, "tree");
      Object.keys(v).forEach(function (k) {
        dl.appendChild(el("dt", k));
        var dd = el("dd");
        dd.appendChild(tree(v[k]));
        dl.appendChild(dd);
      });
      return dl;
    }
    return el("span", v === null ? "null" : v);
  }

  // Each output's verdicts about one message (`turn: "messages[N]"` in
  // its details), by that message's name.
  function turnVerdicts(s) {
    var by = {};
    outputs.forEach(function (name) {
      var o = s.outcomes[name];
      (function walk(v) {
        if (Array.isArray(v)) {
          v.forEach(walk);
        } else if (v && typeof v === "object") {
          if (typeof v.turn === "string" && "verdict" in v) {
            (by[v.turn] = by[v.turn] || []).push({ output: name, verdict: v.verdict, reason: v.reason });
          }
          Object.keys(v).forEach(function (k) { walk(v[k]); });
        }
      })(o && o.details);
    });
    return by;
  }

  // The conversation as a transcript: each message with its role and the
  // verdicts about it beside it; tool calls and tool results folded.
  function transcript(s) {
    var verdicts = turnVerdicts(s);
    var ol = el("ol", null, "transcript");
    s.fields.messages.forEach(function (m, i) {
      var name = "messages[" + i + "]";
      var li = el("li", null, "message role-" + m.role);
      li.setAttribute("data-message", String(i));
      var head = el("div", null, "message-head");
      head.appendChild(el("span", m.role, "badge role"));
      head.appendChild(el("span", name, "note"));
      li.appendChild(head);
      (verdicts[name] || []).forEach(function (v) {
        var line = el("div", null, "turn-verdict");
        line.appendChild(el("span", v.output + ": " + v.verdict, "badge " + v.verdict));
        if (v.reason) line.appendChild(el("span", v.reason, "reason"));
        li.appendChild(line);
      });
      if (m.role === "tool") {
        var result = el("details", null, "tool-result");
        result.appendChild(el("summary", "tool result"));
        result.appendChild(el("pre", m.content));
        li.appendChild(result);
      } else if (m.content) {
        li.appendChild(el("pre", m.content));
      }
      (m.tool_calls || []).forEach(function (c) {
        var call = el("details", null, "tool-call");
        call.appendChild(el("summary", "calls " + c.name));
        call.appendChild(el("pre", JSON.stringify(c.args, null, 2)));
        li.appendChild(call);
      });
      ol.appendChild(li);
    });
    return ol;
  }

  function show(s) {
    detail.replaceChildren();
    detail.appendChild(el("h2", "Sample " + s.id + " (row " + s.row + ")"));
    var fields = el("section", null, "fields");
    if (s.fields) {
      FIELDS.forEach(function (f) {
        var v = s.fields[f];
        if (v === undefined) return;
        fields.appendChild(el("h3", f));
        if (Array.isArray(v)) {
          var ol = el("ol");
          v.forEach(function (x) { var li = el("li"); li.appendChild(el("pre", plain(x))); ol.appendChild(li); });
          fields.appendChild(ol);
        } else {
          fields.appendChild(el("pre", v, "field-" + f));
        }
      });
      if (s.fields.messages) {
        fields.appendChild(el("h3", "messages"));
        fields.appendChild(transcript(s));
      }
    } else {
      fields.appendChild(el("p", data.input_read
        ? "This row could not be read from the input: its failures say why."
        : "Input fields are not available (see the notes above the table).", "note"));
    }
    detail.appendChild(fields);
    outputs.forEach(function (name) {
      var o = s.outcomes[name];
      if (!o) return;
      var box = el("div", null, "outcome");
      var h = el("h3");
      h.appendChild(el("span", o.status, "badge " + o.status));
      h.appendChild(document.createTextNode(name + (o.status === "scored" ? " = " + o.value.toFixed(4) : "")));
      box.appendChild(h);
      if (o.reason) box.appendChild(el("p", o.reason, "reason"));
      if (o.error) box.appendChild(el("pre", "failed (" + o.error.kind + "): " + o.error.message, "error"));
      if (o.details !== undefined) box.appendChild(tree(o.details));
      detail.appendChild(box);
    });
  }

  filterBox.addEventListener("input", render);
  filterBox.addEventListener("change", render);
  statusBox.addEventListener("change", render);
  render();
})();
