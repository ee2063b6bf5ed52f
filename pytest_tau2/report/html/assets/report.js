/* pytest-tau2 report: the scenario table (sort, filters, comparison flips) and the scenario panel.
   Runs before the per-scenario detail elements are parsed, so the table is usable at once;
   a panel parses (and, for large reports, inflates) one scenario's details when it opens. */
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const DATA = JSON.parse($("tau2-index").textContent);
  const RUNS = DATA.runs;
  const ROWS = DATA.rows;
  const N = RUNS.length;
  const KNOWN = new Set(DATA.known);
  // The registered signals (scoring/signals.py's table, custom ones included), in table order:
  // the failed-signal column and filter name them, the panel lists each one's value.
  const SIGNALS = DATA.signals || [];
  const SIGNAL = new Map(SIGNALS.map((s) => [s.key, s]));
  const RANK = { error: 0, failed: 1, "n/a": 2, passed: 3 };
  const SIDES = ["agent", "user", "judge"];
  const state = { search: "", domain: "", outcome: "", signal: "", flip: "", a: 0, b: N - 1, sort: null, dir: 1 };
  const cache = new Map();
  let detailsReady = false;
  const pending = [];

  // ---------------------------------------------------------------- helpers
  const ESC = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
  const esc = (v) => String(v == null ? "" : v).replace(/[&<>"']/g, (c) => ESC[c]);
  const pct = (v) => (v == null ? "–" : (100 * v).toFixed(1) + "%");
  const secs = (v) => (v == null ? "–" : v < 1 ? (v * 1000).toFixed(0) + " ms" : v < 120 ? v.toFixed(1) + " s" : (v / 60).toFixed(1) + " min");
  const usd = (v) => (v == null ? "unpriced" : v === 0 ? "$0" : v < 1 ? "$" + v.toFixed(4) : "$" + v.toFixed(2));
  const count = (v) => (v == null ? "–" : v >= 1e6 ? (v / 1e6).toFixed(1) + "M" : v >= 1e3 ? (v / 1e3).toFixed(1) + "k" : String(v));
  const json = (v) => JSON.stringify(v, null, 2);
  const badge = (o) => (o ? `<span class="badge ${o === "n/a" ? "na" : esc(o)}">${esc(o)}</span>` : `<span class="badge none">not run</span>`);
  const cells = (row) => row.runs;
  const present = (row) => row.runs.filter((c) => c);
  const worst = (row) => Math.min(...present(row).map((c) => RANK[c.o] ?? 2));
  const isFlipped = (row) => new Set(present(row).map((c) => c.o)).size > 1;
  const failing = (o) => o === "failed" || o === "error";

  // ---------------------------------------------------------------- filters
  const domains = [...new Set(ROWS.map((r) => r.domain))].sort();
  // the signals that failed somewhere: the table's first, in its order; then names it does not know
  // (``stalled``; a field of a signal not registered where the report was built)
  const failedSomewhere = new Set(ROWS.flatMap((r) => present(r).flatMap((c) => c.f)));
  const signals = [...SIGNALS.map((s) => s.key).filter((k) => failedSomewhere.has(k)),
    ...[...failedSomewhere].filter((k) => !SIGNAL.has(k)).sort()];
  const signalTitle = (key) => (SIGNAL.has(key) ? `${SIGNAL.get(key).label}: ${SIGNAL.get(key).doc}` : "");
  const fill = (sel, values, title) => { for (const v of values) sel.insertAdjacentHTML("beforeend", `<option value="${esc(v)}"${title && title(v) ? ` title="${esc(title(v))}"` : ""}>${esc(v)}</option>`); };
  fill($("f-domain"), domains);
  fill($("f-signal"), signals, signalTitle);
  if (N > 1) {
    for (const id of ["f-a", "f-b"]) RUNS.forEach((r, i) => $(id).insertAdjacentHTML("beforeend", `<option value="${i}">${esc(r.label)}</option>`));
    $("f-a").value = String(state.a);
    $("f-b").value = String(state.b);
  }
  // the text a search looks in, built on the first search (not at load: thousands of rows)
  const hay = (row) => row._hay || (row._hay = [row.key, row.desc, row.tau2_id, row.domain,
    ...present(row).flatMap((c) => [c.err, c.sr, ...c.f, ...(c.mk || [])])].join(" ").toLowerCase());

  function matches(row) {
    const runs = present(row);
    if (state.domain && row.domain !== state.domain) return false;
    if (state.outcome && !runs.some((c) => c.o === state.outcome)) return false;
    if (state.signal && !runs.some((c) => c.f.includes(state.signal))) return false;
    if (state.search && !state.search.split(/\s+/).every((w) => hay(row).includes(w))) return false;
    if (state.flip) {
      const a = row.runs[state.a], b = row.runs[state.b];
      if (state.flip === "flipped" && !isFlipped(row)) return false;
      if (state.flip === "broke" && !(a && b && a.o === "passed" && failing(b.o))) return false;
      if (state.flip === "fixed" && !(a && b && failing(a.o) && b.o === "passed")) return false;
    }
    return true;
  }

  // ---------------------------------------------------------------- columns
  const anyReward = ROWS.some((r) => present(r).some((c) => c.rw != null));
  const anyTrial = ROWS.some((r) => r.trial != null);
  const anyCost = ROWS.some((r) => present(r).some((c) => c.tok > 0));
  const nameCell = (r) => {
    const marks = present(r).flatMap((c) => c.mk || []);
    const tags = [...new Set(marks)].map((m) => `<span class="tag accent">${esc(m)}</span>`).join("");
    return `<b>${esc(r.key)}</b> ${tags}<div class="desc" title="${esc(r.desc)}">${esc(r.desc)}</div>`;
  };
  const signalTags = (c) => (c ? c.f.map((s) => `<span class="tag bad"${SIGNAL.has(s) ? ` title="${esc(signalTitle(s))}"` : ""}>${esc(s)}</span>`).join("") : "");
  let COLUMNS;
  if (N === 1) {
    const c0 = (r) => r.runs[0] || {};
    COLUMNS = [
      { id: "outcome", label: "Outcome", key: (r) => RANK[c0(r).o] ?? 2, html: (r) => badge(c0(r).o) },
      { id: "name", label: "Scenario", key: (r) => r.key, html: nameCell, cls: "name" },
      { id: "domain", label: "Domain", key: (r) => r.domain, html: (r) => esc(r.domain) },
      { id: "failed", label: "Failed signals", key: (r) => (c0(r).f || []).join(","), html: (r) => signalTags(c0(r)) },
      { id: "stop", label: "Stop reason", key: (r) => c0(r).sr || "", html: (r) => esc(c0(r).sr) },
      { id: "turns", label: "Agent turns", num: true, key: (r) => c0(r).turns ?? -1, html: (r) => esc(c0(r).turns) },
      { id: "te", label: "Tool errors", num: true, key: (r) => c0(r).te ?? -1, html: (r) => esc(c0(r).te) },
      { id: "dur", label: "Duration", num: true, key: (r) => c0(r).dur ?? -1, html: (r) => secs(c0(r).dur) },
    ];
    if (anyCost) {
      COLUMNS.push({ id: "tok", label: "Tokens", num: true, key: (r) => c0(r).tok ?? -1, html: (r) => count(c0(r).tok) });
      COLUMNS.push({ id: "cost", label: "Cost", num: true, key: (r) => c0(r).cost ?? -1, html: (r) => usd(c0(r).cost) });
    }
    if (anyReward) COLUMNS.push({ id: "rw", label: "tau2 reward", num: true, key: (r) => c0(r).rw ?? -1, html: (r) => (c0(r).rw == null ? "–" : esc(c0(r).rw)) });
  } else {
    COLUMNS = [
      { id: "name", label: "Scenario", key: (r) => r.key, html: nameCell, cls: "name" },
      { id: "domain", label: "Domain", key: (r) => r.domain, html: (r) => esc(r.domain) },
      ...RUNS.map((run, i) => ({
        id: "run" + i, label: run.label, key: (r) => (r.runs[i] ? RANK[r.runs[i].o] : 9),
        html: (r) => badge(r.runs[i] && r.runs[i].o) + " " + signalTags(r.runs[i]) +
          (anyReward && r.runs[i] && r.runs[i].rw != null ? ` <span class="tag">reward ${esc(r.runs[i].rw)}</span>` : ""),
      })),
      { id: "flip", label: "Flipped", key: (r) => (isFlipped(r) ? 0 : 1), html: (r) => (isFlipped(r) ? '<span class="tag accent">flipped</span>' : "") },
    ];
  }
  if (anyTrial) COLUMNS.splice(2, 0, { id: "trial", label: "Trial", num: true, key: (r) => r.trial ?? -1, html: (r) => esc(r.trial) });

  function header() {
    $("scenario-head").innerHTML = "<tr>" + COLUMNS.map((c) => {
      const sort = state.sort === c.id ? ` aria-sort="${state.dir > 0 ? "ascending" : "descending"}"` : "";
      return `<th data-col="${c.id}"${c.num ? ' class="num"' : ""}${sort}>${esc(c.label)}</th>`;
    }).join("") + "</tr>";
  }

  function sorted(rows) {
    const col = COLUMNS.find((c) => c.id === state.sort);
    const byDefault = (a, b) => worst(a) - worst(b) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
    if (!col) return rows.slice().sort(byDefault);
    return rows.slice().sort((a, b) => {
      const x = col.key(a), y = col.key(b);
      return (x < y ? -1 : x > y ? 1 : 0) * state.dir || byDefault(a, b);
    });
  }

  // The table draws PAGE rows at a time (more as its end scrolls into view): laying out a table
  // of thousands of rows blocks the page for seconds (bench/results/report.md), a page of it does not.
  const PAGE = 150;
  let current = [];
  let drawn = 0;
  const rowHtml = (r) => `<tr data-key="${esc(r.key)}"${N > 1 && isFlipped(r) ? ' class="flipped"' : ""}>` +
    COLUMNS.map((c) => `<td${c.num ? ' class="num"' : c.cls ? ` class="${c.cls}"` : ""}>${c.html(r)}</td>`).join("") + "</tr>";

  function render() {
    current = sorted(ROWS.filter(matches));
    drawn = 0;
    $("scenario-body").innerHTML = current.length ? "" :
      `<tr><td colspan="${COLUMNS.length}" class="muted">No scenario matches these filters.</td></tr>`;
    more(false);
    $("shown-count").textContent = `${current.length} of ${ROWS.length} shown`;
  }

  function more(all) {
    const body = $("scenario-body");
    const old = $("more-row");
    if (old) old.remove();
    const next = all ? current.length : Math.min(current.length, drawn + PAGE);
    body.insertAdjacentHTML("beforeend", current.slice(drawn, next).map(rowHtml).join(""));
    drawn = next;
    if (drawn >= current.length) return;
    body.insertAdjacentHTML("beforeend", `<tr id="more-row"><td colspan="${COLUMNS.length}">` +
      `<button type="button" data-more="page">Show ${Math.min(PAGE, current.length - drawn)} more</button> ` +
      `<button type="button" data-more="all">Show all ${current.length}</button> ` +
      `<span class="muted">${drawn} of ${current.length} drawn</span></td></tr>`);
    if (observer) observer.observe($("more-row"));
  }

  const observer = typeof IntersectionObserver === "undefined" ? null : new IntersectionObserver(
    (entries) => { if (entries.some((e) => e.isIntersecting)) more(false); },
    { root: document.querySelector(".table-wrap"), rootMargin: "300px" });

  // ---------------------------------------------------------------- comparison flips in the overview
  function flipChips() {
    const box = $("flips");
    if (!box || N < 2) return;
    let flipped = 0, broke = 0, fixed = 0;
    for (const r of ROWS) {
      const a = r.runs[state.a], b = r.runs[state.b];
      if (isFlipped(r)) flipped++;
      if (a && b && a.o === "passed" && failing(b.o)) broke++;
      if (a && b && failing(a.o) && b.o === "passed") fixed++;
    }
    const A = esc(RUNS[state.a].label), B = esc(RUNS[state.b].label);
    box.innerHTML =
      `<button class="flip-chip" data-flip="flipped"><b>${flipped}</b> flipped</button>` +
      `<button class="flip-chip" data-flip="broke"><b>${broke}</b> passed in ${A}, failed in ${B}</button>` +
      `<button class="flip-chip" data-flip="fixed"><b>${fixed}</b> failed in ${A}, passed in ${B}</button>`;
  }

  // ---------------------------------------------------------------- details (lazy)
  // A cell's details: its own JSON element ("d<run>-<n>"), or an entry of a compressed chunk ("z<n>").
  async function details(cell) {
    const id = cell.z || cell.d;
    if (!cache.has(id)) {
      const el = $(id);
      if (!el) throw new Error(`no embedded details ${id}`);
      cache.set(id, el.type === "application/x-tau2-gzip" ? inflate(el.textContent) : Promise.resolve(JSON.parse(el.textContent)));
    }
    const value = await cache.get(id);
    return cell.z ? value[cell.d] : value;
  }

  async function inflate(base64) {
    if (typeof DecompressionStream === "undefined") throw new Error("this browser cannot inflate the embedded details (no DecompressionStream); open the raw files instead");
    const bytes = Uint8Array.from(atob(base64), (ch) => ch.charCodeAt(0));
    return JSON.parse(await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text());
  }

  function whenDetails(fn) { if (detailsReady) fn(); else pending.push(fn); }
  window.tau2DetailsReady = function () { detailsReady = true; pending.splice(0).forEach((fn) => fn()); };
  document.addEventListener("DOMContentLoaded", () => window.tau2DetailsReady());

  // ---------------------------------------------------------------- the panel
  let openKey = null;
  function open(key, runIndex) {
    const row = ROWS.find((r) => r.key === key);
    if (!row) return;
    let r = runIndex != null && row.runs[runIndex] ? runIndex : N > 1 && row.runs[state.b] ? state.b : row.runs.findIndex((c) => c);
    openKey = key;
    $("panel").hidden = false;
    $("backdrop").hidden = false;
    document.body.style.overflow = "hidden";
    const hash = `#s=${encodeURIComponent(key)}${N > 1 ? "&r=" + r : ""}`;
    if (location.hash !== hash) history.replaceState(null, "", hash);
    const cell = row.runs[r];
    $("panel-title").innerHTML = `<h2>${badge(cell && cell.o)} ${esc(row.key)}</h2><p>${esc(row.desc)}</p>`;
    $("panel-body").innerHTML = runTabs(row, r) + '<p class="muted">Loading…</p>';
    if (!cell || !cell.d) {
      $("panel-body").innerHTML = runTabs(row, r) + `<div class="alert"><b>No result</b><pre>${esc(cell ? cell.err : "not run")}</pre></div>`;
      return;
    }
    whenDetails(() => details(cell).then((d) => {
      if (openKey === key) { $("panel-body").innerHTML = runTabs(row, r) + panel(row, cell, d); callSource(); }
    }).catch((e) => { $("panel-body").innerHTML = `<div class="alert">${esc(e.message)}</div>`; }));
  }

  function close() {
    openKey = null;
    $("panel").hidden = true;
    $("backdrop").hidden = true;
    document.body.style.overflow = "";
    if (location.hash.startsWith("#s=")) history.replaceState(null, "", "#scenarios");
  }

  function runTabs(row, active) {
    if (N < 2) return "";
    return '<div class="run-tabs">' + RUNS.map((run, i) => {
      const c = row.runs[i];
      return `<button type="button" data-run="${i}" class="${i === active ? "active" : ""}"${c ? "" : " disabled"}>` +
        `<span class="swatch s${i % 6}"></span> ${esc(run.label)} ${badge(c && c.o)}</button>`;
    }).join("") + "</div>";
  }

  function tokenFacts(usage) {
    const sides = SIDES.concat(Object.keys(usage).filter((s) => !SIDES.includes(s))).filter((s) => usage[s] && usage[s].calls);
    if (!sides.length) return fact("Tokens", '<span class="muted">no model calls</span>');
    return sides.map((s) => {
      const u = usage[s];
      return fact(`${s} tokens`, `${count(u.prompt_tokens)} in + ${count(u.completion_tokens)} out<div class="muted">${u.calls} calls · ${usd(u.cost_usd)}</div>`);
    }).join("");
  }

  // {"DB": 0.0, "COMMUNICATE": 1.0} (or {"DB": {"reward": 0.0, ...}}) as chips; any other shape as JSON
  function rewardBreakdown(b) {
    const value = (v) => (v && typeof v === "object" ? ["reward", "score", "value"].map((k) => v[k]).find((x) => x != null) : v);
    const entries = b && typeof b === "object" && !Array.isArray(b) ? Object.entries(b) : [];
    const flat = entries.length && entries.every(([, v]) => ["number", "boolean"].includes(typeof value(v)));
    if (!flat) return `<pre>${esc(json(b))}</pre>`;
    return entries.map(([k, v]) => {
      const x = Number(value(v));
      return `<span class="tag ${x >= 1 ? "" : "bad"}">${x >= 1 ? "✓" : "✗"} ${esc(k)} ${esc(value(v))}</span>`;
    }).join(" ") + (entries.some(([, v]) => v && typeof v === "object") ? `<details><summary>details</summary><pre>${esc(json(b))}</pre></details>` : "");
  }

  const fact = (k, v) => `<div class="fact"><div class="k">${esc(k)}</div><div class="v">${v}</div></div>`;

  function panel(row, cell, d) {
    const m = d.metrics || {};
    const usage = m.token_usage || {};
    const tags = [row.domain, m.tau2_id && "tau2 id " + m.tau2_id, m.trial != null && "trial " + m.trial, ...(cell.mk || [])]
      .filter(Boolean).map((t) => `<span class="tag">${esc(t)}</span>`).join("");
    let out = `<p>${tags}</p>`;
    if (m.infrastructure_error) out += `<div class="alert"><b>Infrastructure error</b> (not the agent's fault)<pre>${esc(m.infrastructure_error)}</pre></div>`;
    if (m.first_divergence) out += divergence(m.first_divergence);
    if (m.review) out += review(m.review);
    out += '<div class="facts">' +
      fact("Outcome", badge(cell.o)) +
      fact("Stop reason", esc(m.stop_reason)) +
      fact("Agent turns", esc(m.agent_turns)) +
      fact("Tool errors", esc(m.tool_errors)) +
      fact("Duration", `${secs(m.duration_s)}<div class="muted">conversation ${secs(m.conversation_duration_s)}</div>`) +
      (m.tau2_reward != null ? fact("tau2 reward", esc(m.tau2_reward)) : "") +
      tokenFacts(usage) +
      fact("Agent", `<code>${esc(m.agent)}</code>`) + fact("User", `<code>${esc(m.user)}</code>`) +
      (m.recording && typeof m.recording === "object" ? fact("Model traffic",
        `${esc(m.recording.mode)} · ${esc(m.recording.replayed_calls ?? 0)} replayed · ${esc(m.recording.recorded_calls ?? 0)} recorded` +
        `<div class="muted"><code>${esc(m.recording.cassette)}</code></div>`) : "") +
      "</div>";
    if (m.tau2_reward_breakdown != null) out += `<div class="block"><h3>tau2 reward breakdown</h3>${rewardBreakdown(m.tau2_reward_breakdown)}</div>`;
    out += `<div class="block" id="signals"><h3>Signals</h3>${signalList(m)}</div>`;
    out += `<div class="block" id="checks"><h3>Checks</h3>${checks(m, d)}</div>`;
    if (m.voice && typeof m.voice === "object") out += `<div class="block" id="call"><h3>Phone call</h3>${phoneCall(m.voice, d.call)}</div>`;
    out += `<div class="block" id="conversation"><h3>Conversation</h3>${conversation(d, m)}</div>`;
    const extra = Object.keys(m).filter((k) => !KNOWN.has(k));
    if (extra.length) out += `<div class="block"><h3>Other fields</h3><table class="mini">${extra.map((k) => `<tr><td><code>${esc(k)}</code></td><td><pre>${esc(json(m[k]))}</pre></td></tr>`).join("")}</table></div>`;
    const labels = m.labels || {};
    if (labels.behavior_config != null || labels.voice_config != null) out += `<div class="block"><h3>Persona labels</h3><pre>${esc(json(labels))}</pre></div>`;
    out += `<div class="block files"><h3>Raw files</h3>${(d.files || []).map(([name, href]) => `<a href="${esc(href)}">${esc(name)}</a>`).join("") || '<span class="muted">folder not found</span>'}</div>`;
    return out;
  }

  // ---------------------------------------------------------------- a phone call (docs/voice.md)
  // call.wav in a player, its figures, and each utterance at its time in the file: a click seeks there.
  const clock = (v) => (v == null ? "" : `${Math.floor(v / 60)}:${(v % 60).toFixed(1).padStart(4, "0")}`);
  const rate = (v) => (v == null ? "–" : Number(v).toFixed(2));
  function phoneCall(v, src) {
    const lat = v.latency_s || {};
    const wer = v.wer || {};
    let out = '<div class="facts">' + fact("Preset", esc(v.complexity)) + fact("Persona", esc(v.persona)) +
      fact("Response latency", ["p50", "p90", "p95"].map((q) => `${q} ${lat[q] == null ? "–" : secs(lat[q])}`).join("<br>")) +
      fact("Word error rate", `user ${rate(wer.user)}<br>agent ${rate(wer.agent)}`) +
      fact("Interruptions", `${esc(v.interruptions ?? 0)}<div class="muted">${esc(v.overlap_s ?? 0)} s of overlap</div>`) +
      fact("Speech", secs(v.audio_s)) + "</div>";
    // call.wav is a file of the results folder, like the raw files: its source is set when the panel opens (callSource)
    out += src ? `<audio class="call-audio" controls preload="metadata" data-call="${esc(src)}"></audio>` : '<p class="muted">No call.wav in the scenario folder.</p>';
    const turns = (v.turns || []).map((t) => {
      const seek = t.start_s != null ? ` data-start="${esc(t.start_s)}" data-end="${esc(t.end_s)}" tabindex="0" title="play from ${clock(t.start_s)}"` : "";
      const cut = t.interrupted ? ' <span class="tag">the user cut in</span>' : "";
      return `<li class="turn ${t.side === "agent" ? "agent" : "user"}"${seek}><span class="at">${clock(t.start_s)}</span> ` +
        `<b>${t.side === "agent" ? "Agent" : "User"}</b> ${esc(t.spoken)}${cut}<div class="muted">heard: ${esc(t.heard || "(nothing)")}</div></li>`;
    });
    return out + `<ol class="call-turns">${turns.join("")}</ol>`;
  }
  function callSource() {
    const audio = $("panel-body").querySelector("audio[data-call]");
    if (audio) audio.setAttribute("src", audio.dataset.call);
  }
  function seekCall(li) {
    const audio = $("panel-body").querySelector(".call-audio");
    if (!audio) return;
    audio.currentTime = +li.dataset.start;
    markTurn(audio);
  }
  function markTurn(audio) {
    const now = audio.currentTime;
    $("panel-body").querySelectorAll(".call-turns li[data-start]").forEach((li) => {
      li.classList.toggle("playing", now >= +li.dataset.start && now < +li.dataset.end);
    });
  }

  // where a failed conversation first left the gold (scoring/divergence.py), its argument diff
  function divergence(f) {
    const diff = Object.entries(f.argument_diff || {});
    const rows = diff.map(([name, v]) => `<tr><td><code>${esc(name)}</code></td><td><code class="diff-exp">${esc(JSON.stringify(v.expected))}</code></td>` +
      `<td><code class="diff-act">${esc(JSON.stringify(v.found))}</code></td></tr>`).join("");
    const table = rows ? `<table class="mini"><thead><tr><th>Argument</th><th>Gold</th><th>Called</th></tr></thead><tbody>${rows}</tbody></table>` : "";
    return `<div class="block divergence" data-kind="${esc(f.kind)}"><h3>First divergence from gold</h3>` +
      `<p><span class="tag">${esc(String(f.kind).replace(/_/g, " "))}</span> <code>${esc(f.tool)}</code>` +
      `${f.turn_idx != null ? ` at turn #${esc(f.turn_idx)}` : ""}</p><p>${esc(f.summary)}</p>${table}</div>`;
  }

  // a model's review of the conversation (pytest-tau2 review): each error, whose, how bad, where
  function review(r) {
    if (r.error) return `<div class="block review"><h3>Review</h3><p class="muted">No review: ${esc(r.error)}</p></div>`;
    const errors = r.errors || [];
    const rows = errors.map((e) => `<tr data-source="${esc(e.source)}"><td>${esc(e.source)}</td><td><span class="tag">${esc(e.severity)}</span></td>` +
      `<td>#${esc(e.turn_idx)}</td><td>${esc((e.error_tags || []).join(", "))}</td><td class="reason">${e.quote ? `<q>${esc(e.quote)}</q> ` : ""}${esc(e.reasoning)}` +
      `${e.reviewer ? ` <span class="muted">(${esc(e.reviewer)})</span>` : ""}</td></tr>`).join("");
    const flag = r.critical_user_error ? '<span class="tag disagree">critical user-simulator error</span> ' : "";
    return `<div class="block review"><h3>Review <span class="muted">(${esc((r.reviewers || []).join(", "))}, ${esc(r.mode)})</span></h3>` +
      `<p>${flag}${esc(r.summary || "")}</p>` + (rows ? '<table class="verdicts"><thead><tr><th>Whose</th><th>Severity</th><th>Turn</th><th>Tags</th><th>What</th></tr></thead>' +
      `<tbody>${rows}</tbody></table>` : '<p class="muted">No error found.</p>') + "</div>";
  }

  // ---------------------------------------------------------------- the signals' values
  // One row per registered signal the result has a field for, then the fields its success_breakdown
  // names that the table does not know (a signal registered only where the run was made).
  function signalList(m) {
    const gating = new Set(m.success_signals || []);
    const b = m.success_breakdown || {};
    const gated = [...(b.passed || []), ...(b.failed || []), ...(b.not_applicable || [])];
    const metrics = new Set(SIGNALS.map((s) => s.metric));
    const unknown = (f, gates) => ({ key: f, metric: f, label: f, kind: "", doc: "", na: "", gates });
    const rows = SIGNALS.filter((s) => s.metric in m).map((s) => ({ ...s, gates: gating.has(s.key) }))
      .concat(gated.filter((f) => !metrics.has(f)).map((f) => unknown(f, true)))
      .concat(Object.keys(b.excluded || {}).filter((f) => !metrics.has(f)).map((f) => unknown(f, false)));
    if (!rows.length) return '<p class="muted">No signal recorded.</p>';
    return '<table class="mini signals"><tbody>' + rows.map((s) => {
      const v = s.metric in m ? m[s.metric] : (b.excluded || {})[s.metric];
      const ok = v == null || v === "N/A" ? null : typeof v === "boolean" ? v : Number(v) >= 1;
      const icon = ok === true ? '<span class="icon pass">✓</span>' : ok === false ? '<span class="icon fail">✗</span>' : '<span class="icon skip">–</span>';
      const shown = v == null || v === "N/A" ? `<span class="muted"${s.na ? ` title="not applicable when ${esc(s.na)}"` : ""}>n/a</span>` : typeof v === "number" && s.kind === "rate" ? pct(v) : esc(v);
      const role = s.gates ? '<span class="tag">gating</span>' : '<span class="tag">informational</span>';
      return `<tr data-signal="${esc(s.key)}"><td>${icon}</td><td title="${esc(s.doc)}">${esc(s.label)}</td>` +
        `<td><code>${esc(s.key)}</code></td><td class="num">${shown}</td><td>${role}</td></tr>`;
    }).join("") + "</tbody></table>";
  }

  // ---------------------------------------------------------------- checks and their evidence
  function checks(m, d) {
    const gating = new Set(m.success_signals || []);
    const preds = m.db_state_assertion_verdicts || [];
    const nls = m.nl_assertion_verdicts || [];
    const list = m.checks || [];
    const rank = (c) => (c.passed === false ? (gating.has(c.signal) ? 0 : 1) : c.passed === true ? 2 : 3);
    const ordered = list.slice().sort((a, b) => rank(a) - rank(b));
    let out = ordered.map((c) => {
      const icon = c.passed === true ? '<span class="icon pass">✓</span>' : c.passed === false ? '<span class="icon fail">✗</span>' : '<span class="icon skip">–</span>';
      const role = gating.has(c.signal) ? '<span class="tag">gating</span>' : '<span class="tag">informational</span>';
      let body = "";
      // the DB diff, also where tau2's reward quotes it (its DB component under --tau2-verdict tau2-reward)
      const diffs = c.signal === "db_state_match" || (c.signal === "tau2_reward" && c.message.includes("\ndiff (expected -> actual):"));
      if (c.message) body += `<div class="evidence">${diffs ? diff(c.message) : `<pre>${esc(c.message)}</pre>`}</div>`;
      const index = /\[(\d+)/.exec(c.id);
      if (c.signal === "db_state_assertion" && index && preds[+index[1]]) body += predicateTable([preds[+index[1]]]);
      if (c.signal === "nl_assertion" && index && nls[+index[1]]) body += nlTable([nls[+index[1]]]);
      if (c.signal === "nl_assertion" && !index && nls.length) body += nlTable(nls);
      if (c.signal === "action_match" && d.definition && (d.definition.gold_actions || d.definition.reference_answer)) body += goldActions(d);
      return `<div class="check" data-check="${esc(c.id)}"><div class="check-head">${icon}<span class="id">${esc(c.id)}</span>` +
        `<span class="tag">${esc(c.signal)}</span>${role}</div>${body}</div>`;
    }).join("");
    if (!list.length) out = (preds.length ? predicateTable(preds) : "") + (nls.length ? nlTable(nls) : "") || '<p class="muted">No checks recorded.</p>';
    if (d.judge && d.judge.error) out += `<div class="alert"><b>Judge error</b> (${esc(d.judge.model)})<pre>${esc(d.judge.error)}</pre></div>`;
    return out;
  }

  function diff(text) {
    return text.split("\n").map((line) => {
      const m = /^([a-z_]+): (root\S*?): (.*)$/.exec(line);
      if (!m) return `<div class="diff-line"><pre>${esc(line)}</pre></div>`;
      const kind = m[1].replace("values_changed", "changed").replace("type_changes", "type").replace(/_/g, " ");
      const ea = /^expected (.*) but found (.*?)( \(type .*\))?$/.exec(m[3]);
      const detail = ea ? `expected <span class="diff-exp">${esc(ea[1])}</span> but found <span class="diff-act">${esc(ea[2])}</span><span class="muted">${esc(ea[3] || "")}</span>` : esc(m[3]);
      return `<div class="diff-line mono"><span class="diff-kind">${esc(kind)}</span> <span class="diff-path">${esc(m[2])}</span>: ${detail}</div>`;
    }).join("");
  }

  // several judges (--tau2-judge-model A,B,C): each one's verdict under the majority's
  function jury(v) {
    const judges = Array.isArray(v.judges) ? v.judges : [];
    if (judges.length < 2) return "";
    const split = new Set(judges.map((j) => j.passed)).size > 1;
    const rows = judges.map((j) => `<div class="juror"><span class="icon ${j.passed ? "pass" : "fail"}">${j.passed ? "✓" : "✗"}</span> <code>${esc(j.judge)}</code> <span class="reason">${esc(j.reason)}</span></div>`).join("");
    return `<tr class="jury"><td></td><td colspan="2">${split ? '<span class="tag disagree">judges disagree</span>' : '<span class="tag">unanimous</span>'}${rows}</td></tr>`;
  }

  function predicateTable(preds) {
    return '<table class="verdicts"><thead><tr><th></th><th>Predicate</th><th>Side</th><th>Expected</th><th>Actual</th><th>Message / error</th></tr></thead><tbody>' +
      preds.map((p) => `<tr><td>${p.passed ? "✓" : "✗"}</td><td><code>${esc(p.func_name)}</code></td><td>${esc(p.side)}</td>` +
        `<td><code>${esc(JSON.stringify(p.expected))}</code></td><td><code>${esc(JSON.stringify(p.actual))}</code></td>` +
        `<td class="reason">${esc(p.error || (p.passed ? "" : p.message))}</td></tr>`).join("") + "</tbody></table>";
  }

  function nlTable(verdicts) {
    return '<table class="verdicts"><thead><tr><th></th><th>Assertion</th><th>Judge\'s reason</th></tr></thead><tbody>' +
      verdicts.map((v) => `<tr><td>${v.passed === true ? "✓" : v.passed === false ? "✗" : "–"}</td><td>${esc(v.assertion)}</td><td class="reason">${esc(v.reason)}</td></tr>` + jury(v)).join("") +
      "</tbody></table>";
  }

  // A call's arguments as an object: a transcript made before they were stored parsed holds the
  // JSON string a model sent; a string that is no JSON object stays text (``bad`` says why).
  function callArguments(call) {
    const a = call.arguments;
    if (typeof a !== "string") return { value: a ?? {}, bad: call.invalid_arguments || null };
    if (a.trim() === "") return { value: {}, bad: null };
    try {
      const v = JSON.parse(a);
      if (v && typeof v === "object" && !Array.isArray(v)) return { value: v, bad: call.invalid_arguments || null };
      return { value: a, bad: call.invalid_arguments || "not a JSON object" };
    } catch (e) {
      return { value: a, bad: call.invalid_arguments || "not valid JSON" };
    }
  }

  function goldActions(d) {
    const made = new Set();
    for (const msg of d.messages || []) for (const call of msg.tool_calls || []) {
      const args = callArguments(call);
      if (!args.bad) made.add(call.name + " " + stable(args.value));
    }
    const gold = d.definition.gold_actions || [];
    let out = "";
    if (gold.length) {
      out += '<ol class="gold">' + gold.map((a) => {
        const found = made.has(a.name + " " + stable(a.arguments));
        return `<li class="${found ? "" : "missing"}"><code>${esc(a.name)}(${esc(JSON.stringify(a.arguments))})</code> ` +
          `<span class="muted">${a.requestor === "user" ? "user · " : ""}${found ? "an identical call is in the transcript" : "no identical call in the transcript"}</span></li>`;
      }).join("") + "</ol>";
    }
    if (d.definition.reference_answer != null) out += `<div class="evidence"><span class="muted">reference answer</span><pre>${esc(json(d.definition.reference_answer))}</pre></div>`;
    return out;
  }

  function stable(v) {
    if (Array.isArray(v)) return "[" + v.map(stable).join(",") + "]";
    if (v && typeof v === "object") return "{" + Object.keys(v).sort().map((k) => JSON.stringify(k) + ":" + stable(v[k])).join(",") + "}";
    return JSON.stringify(v);
  }

  // ---------------------------------------------------------------- the conversation as a chat
  function conversation(d, m) {
    const messages = d.messages;
    if (!messages) return '<p class="muted">No transcript.json in the scenario folder.</p>';
    // Each call's result is the tool message in its place after the calling message (the loop
    // writes them in call order): never looked up by id, which two calls may share.
    const results = new Map();
    const shown = new Set();
    messages.forEach((msg, i) => {
      (msg.tool_calls || []).forEach((call, k) => {
        const result = messages[i + 1 + k];
        if (result && result.role === "tool") results.set(call, result);
      });
    });
    let out = "";
    if ((d.initialization || []).length) out += `<details><summary>${d.initialization.length} initialization actions</summary><pre>${esc(json(d.initialization))}</pre></details>`;
    out += '<div class="chat">';
    for (const msg of messages) {
      if (msg.role === "tool") {
        if (shown.has(msg)) continue;
        out += `<div class="msg ${msg.requestor === "user" ? "user" : "agent"}">${toolResult(msg, true)}</div>`;
        continue;
      }
      const side = msg.role === "assistant" ? "agent" : msg.role === "user" ? "user" : "system";
      const who = side === "agent" ? "Agent" : side === "user" ? "User" : esc(msg.role);
      const fixed = msg.generated === false ? '<span class="tag">fixed greeting</span>' : "";
      let body = msg.content ? `<div class="text">${esc(msg.content)}</div>` : "";
      for (const call of msg.tool_calls || []) {
        const result = results.get(call);
        if (result) shown.add(result);
        const parsed = callArguments(call);
        const args = parsed.bad ? String(parsed.value) : JSON.stringify(parsed.value);
        const full = parsed.bad ? String(parsed.value) : json(parsed.value);
        const argsHtml = args.length > 160 ? `<details><summary>arguments (${args.length} chars)</summary><pre class="args">${esc(full)}</pre></details>` : `<code class="args">${esc(args)}</code>`;
        const flag = parsed.bad ? ` <span class="tag bad" title="${esc(parsed.bad)}">arguments not a JSON object: shown as sent</span>` : "";
        const idNote = call.id_generated ? ' <span class="tag" title="the model sent no id; this one was given to the call">id given</span>' :
          call.sent_id != null ? ` <span class="tag" title="the model sent id ${esc(call.sent_id)}, which an earlier call has">id ${esc(call.sent_id)} repeated</span>` : "";
        body += `<div class="call${result && result.error ? " error" : ""}" data-call-id="${esc(call.id)}"><span class="fn">⚙ ${esc(call.name)}</span> ${argsHtml}${flag}${idNote}${result ? toolResult(result, false) : '<div class="muted">no result recorded</div>'}</div>`;
      }
      out += `<div class="msg ${side}"><div class="who">${who} <span>#${esc(msg.turn_idx)}</span>${fixed}</div>${body}</div>`;
    }
    const clean = m.stop_reason === "exit" || m.stop_reason === "transfer";
    out += `<div class="end ${clean ? "clean" : "unclean"}">conversation ended: ${esc(m.stop_reason || "?")}</div></div>`;
    return out;
  }

  function toolResult(msg, standalone) {
    const text = typeof msg.content === "string" ? msg.content : json(msg.content);
    const label = msg.error ? '<span class="tag bad">error</span>' : '<span class="muted">result</span>';
    const body = text.length > 600 ? `<details${msg.error ? " open" : ""}><summary>${label} ${text.length} chars</summary><pre>${esc(text)}</pre></details>` : `${label}<pre>${esc(text)}</pre>`;
    const head = standalone ? `<span class="fn">⚙ ${esc(msg.name)}</span>` : "";
    return `<div class="result${msg.error ? " error" : ""}">${head}${body}</div>`;
  }

  // ---------------------------------------------------------------- events
  function setFilter(name, value) {
    state[name] = value;
    const el = $("f-" + name);
    if (el) el.value = value;
    render();
  }
  $("f-search").addEventListener("input", (e) => { state.search = e.target.value.trim().toLowerCase(); render(); });
  for (const name of ["domain", "outcome", "signal", "flip"]) {
    const el = $("f-" + name);
    if (el) el.addEventListener("change", (e) => setFilter(name, e.target.value));
  }
  for (const name of ["a", "b"]) {
    const el = $("f-" + name);
    if (el) el.addEventListener("change", (e) => { state[name] = +e.target.value; flipChips(); render(); });
  }
  $("f-reset").addEventListener("click", () => {
    Object.assign(state, { search: "", domain: "", outcome: "", signal: "", flip: "", sort: null, dir: 1 });
    $("f-search").value = "";
    for (const name of ["domain", "outcome", "signal", "flip"]) if ($("f-" + name)) $("f-" + name).value = "";
    header(); render();
  });
  $("scenario-head").addEventListener("click", (e) => {
    const th = e.target.closest("th");
    if (!th) return;
    state.dir = state.sort === th.dataset.col ? -state.dir : 1;
    state.sort = th.dataset.col;
    header(); render();
  });
  $("scenario-body").addEventListener("click", (e) => {
    const button = e.target.closest("button[data-more]");
    if (button) { more(button.dataset.more === "all"); return; }
    const tr = e.target.closest("tr[data-key]");
    if (tr) open(tr.dataset.key);
  });
  $("panel-body").addEventListener("click", (e) => {
    const b = e.target.closest("button[data-run]");
    if (b && openKey) open(openKey, +b.dataset.run);
    const turn = e.target.closest(".call-turns li[data-start]");
    if (turn) seekCall(turn);
  });
  $("panel-body").addEventListener("keydown", (e) => { const turn = e.target.closest(".call-turns li[data-start]"); if (turn && e.key === "Enter") seekCall(turn); });
  $("panel-body").addEventListener("timeupdate", (e) => { if (e.target.classList.contains("call-audio")) markTurn(e.target); }, true);
  $("panel-close").addEventListener("click", close);
  $("backdrop").addEventListener("click", close);
  document.addEventListener("keydown", (e) => { if (e.key === "Escape" && openKey) close(); });
  document.addEventListener("click", (e) => {
    const kpi = e.target.closest("[data-filter-outcome]");
    if (kpi) setFilter("outcome", kpi.dataset.filterOutcome);
    const chip = e.target.closest("[data-flip]");
    if (chip) { setFilter("flip", chip.dataset.flip); $("scenarios").scrollIntoView(); }
    const link = e.target.closest("[data-open]");
    if (link) { e.preventDefault(); open(link.dataset.open); }
  });
  function fromHash() {
    const m = /^#s=([^&]*)(?:&r=(\d+))?/.exec(location.hash);
    if (m) open(decodeURIComponent(m[1]), m[2] != null ? +m[2] : null);
  }
  window.addEventListener("hashchange", fromHash);
  document.querySelectorAll("[data-summary]").forEach((el) => { el.textContent = RUNS[+el.dataset.summary].summary || "(no all_summary.txt in the folder)"; });

  header();
  flipChips();
  render();
  performance.mark("tau2-table");
  window.tau2 = { state, setFilter, open, close, rows: ROWS };
  fromHash();
})();
