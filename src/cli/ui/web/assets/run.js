"use strict";
// A run's page: the graph (drawn by the server), the steps with their states, the selected
// step's agent plan, output and the files it changed (with their diff), the state and the
// events, kept current by the server's events.
const run = document.body.dataset.run;
const token = document.querySelector('meta[name="atomic-token"]').content;
const $ = (selector) => document.querySelector(selector);
let view = null;
let selected = null;      // the step key a person chose; null: follow the running step
let shown = { key: null, outputs: -1, state: null, files: null };
const patches = new Map(); // "before..after" → the diff's text (snapshots never change)
const MARKS = { added: "A", modified: "M", deleted: "D", "type-changed": "T" };
const TODO_MARKS = { pending: "☐", "in-progress": "◐", completed: "☑", cancelled: "☒" };

function post(path, body) {
  return fetch(`/api/runs/${encodeURIComponent(run)}/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-atomic-token": token },
    body: JSON.stringify(body || {}),
  });
}

function duration(ms) {
  if (ms < 1000) return `${ms} ms`;
  const s = Math.round(ms / 100) / 10;
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

function tokens(usage) {
  const total = usage.input_tokens + usage.output_tokens + usage.cache_read_tokens + usage.cache_write_tokens;
  return total ? `${total} tokens` : "";
}

function focusKey() {
  if (selected) return selected;
  const running = view.nodes.find((node) => node.state === "running" || node.state === "waiting");
  if (running) return running.key;
  const started = view.nodes.filter((node) => node.state !== "pending");
  return started.length ? started[started.length - 1].key : null;
}

function renderGraph() {
  for (const node of view.nodes) {
    const box = document.querySelector(`#graph .step[data-key="${CSS.escape(node.key)}"]`);
    if (!box) continue;
    box.classList.remove("pending", "running", "done", "failed", "skipped", "waiting", "selected");
    box.classList.add(node.state);
    if (node.key === focusKey()) box.classList.add("selected");
    box.dataset.state = node.state;
    box.dataset.attempts = node.attempts;
  }
}

function renderSteps() {
  const list = $("#steps");
  list.replaceChildren();
  for (const node of view.nodes) {
    if (node.kind === "start" || node.kind === "end") continue;
    const item = document.createElement("li");
    item.dataset.key = node.key;
    item.dataset.state = node.state;
    if (node.key === focusKey()) item.className = "selected";
    const state = document.createElement("span");
    state.className = `state status ${node.state === "done" ? "completed" : node.state}`;
    state.textContent = node.state;
    const name = document.createElement("span");
    name.textContent = node.key;
    const extra = document.createElement("span");
    extra.className = "muted";
    const parts = [];
    if (node.attempts > 1) parts.push(`${node.attempts} attempts`);
    if (node.elapsed_ms != null) parts.push(duration(node.elapsed_ms));
    if (tokens(node.usage)) parts.push(tokens(node.usage));
    if (node.files_changed) parts.push(`${node.files_changed} file${node.files_changed === 1 ? "" : "s"}`);
    if (node.error) parts.push(node.error);
    extra.textContent = parts.join(" · ");
    item.append(state, name, extra);
    item.addEventListener("click", () => select(node.key));
    list.append(item);
  }
}

// The focused step's agent plan, from the run's summary: a plan changes without new output.
function renderPlan() {
  const key = focusKey();
  const node = key && view.nodes.find((n) => n.key === key);
  const todos = (node && node.plan) || [];
  $("#plan").hidden = !todos.length;
  const done = todos.filter((todo) => todo.status === "completed").length;
  $("#plan-count").textContent = `${done}/${todos.length} done`;
  $("#todos").replaceChildren(...todos.map((todo) => {
    const item = document.createElement("li");
    item.className = todo.status;
    const text = todo.status === "in-progress" && todo.active_form ? todo.active_form : todo.content;
    item.textContent = `${TODO_MARKS[todo.status] || TODO_MARKS.pending} ${text}`;
    return item;
  }));
}

function renderOutput(step) {
  const out = $("#output");
  out.replaceChildren();
  $("#step-title").textContent = step ? `Step ${step.key} — ${step.state}` : "Steps";
  if (!step) { renderFiles(null); return; }
  for (const item of step.output) {
    const line = document.createElement("div");
    switch (item.type) {
      case "text": line.textContent = item.text; break;
      case "thinking": line.className = "thinking"; line.textContent = item.text; break;
      case "tool-call": line.className = "tool"; line.textContent = `▸ ${item.name} ${JSON.stringify(item.input)}`; break;
      case "tool-result": line.className = `result${item.is_error ? " error" : ""}`; line.textContent = `  ↳ ${item.summary}`; break;
      case "line": line.className = item.stream === "stderr" ? "result error" : "result"; line.textContent = item.line; break;
    }
    out.append(line);
  }
  if (step.error) {
    const error = document.createElement("div");
    error.className = "result error";
    error.textContent = step.error;
    out.append(error);
  }
  out.scrollTop = out.scrollHeight;
  renderFiles(step);
}

// The files the step last changed, each with its mark and counts, then its diff (read once
// per pair of snapshots).
async function renderFiles(step) {
  const box = $("#files");
  const files = step && step.files;
  box.hidden = !files;
  $("#changed").replaceChildren();
  $("#diff").replaceChildren();
  if (!files) return;
  $("#files-count").textContent = files.changed.length ? `${files.changed.length} changed` : "none changed";
  for (const change of files.changed) {
    const item = document.createElement("li");
    const mark = document.createElement("span");
    mark.className = `mark ${change.status}`;
    mark.textContent = MARKS[change.status] || "?";
    const path = document.createElement("span");
    path.className = "path";
    path.textContent = change.path;
    const counts = document.createElement("span");
    counts.className = "muted";
    counts.textContent = change.added != null && change.removed != null ? `+${change.added} −${change.removed}` : "binary";
    item.append(mark, path, counts);
    $("#changed").append(item);
  }
  if (!files.changed.length) return;
  const id = `${files.before}..${files.after}`;
  let patch = patches.get(id);
  let failed = null;
  if (patch === undefined) {
    const response = await fetch(`/api/runs/${encodeURIComponent(run)}/files/${encodeURIComponent(step.key)}`);
    if (response.ok) {
      patch = await response.text();
      patches.set(id, patch);
    } else {
      failed = await response.text();
    }
  }
  // Another step may have been chosen meanwhile.
  if (shown.key !== step.key) return;
  renderDiff(patch, failed);
}

// A patch, a line a row, coloured by what each line is. Lines are set as text, never as
// markup: a file that holds `<script>` shows it.
function renderDiff(patch, failed) {
  const out = $("#diff");
  if (failed != null) {
    const line = document.createElement("div");
    line.className = "failed";
    line.textContent = `cannot read the diff: ${failed}`;
    out.replaceChildren(line);
    return;
  }
  const lines = patch.split("\n");
  if (lines.length && lines[lines.length - 1] === "") lines.pop();
  let inHunk = false;
  out.replaceChildren(...lines.map((text) => {
    let kind;
    if (text.startsWith("diff ")) { inHunk = false; kind = "file"; }
    else if (text.startsWith("@@")) { inHunk = true; kind = "hunk"; }
    else if (!inHunk) kind = "file";
    else if (text.startsWith("+")) kind = "add";
    else if (text.startsWith("-")) kind = "del";
    else kind = "ctx";
    const line = document.createElement("div");
    line.className = kind;
    line.textContent = text;
    return line;
  }));
}

async function refreshOutput(force) {
  const key = focusKey();
  const node = key && view.nodes.find((n) => n.key === key);
  if (!node) { renderOutput(null); return; }
  if (!force && shown.key === key && shown.outputs === node.outputs && shown.state === node.state
      && shown.files === node.files_changed) return;
  shown = { key, outputs: node.outputs, state: node.state, files: node.files_changed };
  const response = await fetch(`/api/runs/${encodeURIComponent(run)}/steps/${encodeURIComponent(key)}`);
  if (response.ok) renderOutput(await response.json());
}

function renderWaits() {
  const section = $("#waits");
  section.hidden = view.phase !== "paused" || view.waits.length === 0;
  if (section.hidden) return;
  const nodes = $("#wait-node");
  const current = nodes.value;
  nodes.replaceChildren(...view.waits.map((wait) => new Option(wait.node, wait.node)));
  if (view.waits.some((wait) => wait.node === current)) nodes.value = current;
  nodes.hidden = view.waits.length < 2;
  const wait = view.waits.find((w) => w.node === nodes.value) || view.waits[0];
  const header = $("#wait-header");
  header.textContent = wait.header || "";
  header.hidden = !wait.header;
  $("#wait-prompt").textContent = wait.prompt;
  const choice = $("#answer-choice");
  const text = $("#answer-text");
  if (wait.choices.length) {
    // Rebuilt only when the choices change, so a person's selection survives updates.
    const values = wait.choices.map((c) => c.value).join("\n");
    if (choice.dataset.values !== values) {
      choice.replaceChildren(...wait.choices.map((c) => {
        const option = new Option(c.label ? `${c.label} (${c.value})` : c.value, c.value);
        if (c.description) option.title = c.description;
        return option;
      }));
      choice.dataset.values = values;
    }
    choice.hidden = false; text.hidden = true;
  } else {
    choice.hidden = true; text.hidden = false;
  }
  renderChoiceDescription();
}

// The selected choice's description, dimmed under the form.
function renderChoiceDescription() {
  const wait = view.waits.find((w) => w.node === $("#wait-node").value) || view.waits[0];
  const choice = $("#answer-choice");
  const picked = !choice.hidden && wait && wait.choices.find((c) => c.value === choice.value);
  const description = $("#answer-description");
  description.textContent = (picked && picked.description) || "";
  description.hidden = !description.textContent;
}

function render() {
  $("#workflow").textContent = view.workflow;
  const phase = $("#phase");
  phase.textContent = view.phase;
  phase.className = `phase ${view.phase}`;
  const parts = [`step ${view.step}`];
  if (tokens(view.usage)) parts.push(tokens(view.usage));
  if (view.cost_usd != null) parts.push(`$${view.cost_usd.toFixed(4)}`);
  $("#totals").textContent = parts.join(" · ");
  const error = $("#error");
  error.hidden = !view.error;
  error.textContent = view.error || "";
  $("#cancel").disabled = !(view.phase === "running" || view.phase === "paused");
  $("#resume").disabled = !(view.phase === "cancelled" || view.phase === "failed");
  renderGraph();
  renderSteps();
  renderWaits();
  renderPlan();
  $("#state").textContent = JSON.stringify(view.state, null, 2);
  $("#event-count").textContent = `(${view.event_count})`;
  const events = $("#events");
  events.replaceChildren(...view.events.slice().reverse().map((event) => {
    const item = document.createElement("li");
    item.textContent = `${event.type}${event.node ? ` ${event.node}` : ""}`;
    return item;
  }));
  refreshOutput(false);
}

function select(key) {
  selected = key === selected ? null : key;
  if (view) { renderGraph(); renderSteps(); renderPlan(); refreshOutput(true); }
}

async function loadGraph() {
  const response = await fetch(`/api/runs/${encodeURIComponent(run)}/graph.svg`);
  if (!response.ok) return;
  $("#graph").innerHTML = await response.text();
  for (const box of document.querySelectorAll("#graph .step")) {
    box.addEventListener("click", () => select(box.dataset.key));
  }
  if (view) renderGraph();
}

function follow() {
  const source = new EventSource(`/api/runs/${encodeURIComponent(run)}/stream`);
  source.addEventListener("view", (event) => {
    view = JSON.parse(event.data);
    document.body.dataset.phase = view.phase;
    render();
  });
}

$("#answer").addEventListener("submit", async (event) => {
  event.preventDefault();
  const wait = $("#wait-node").value;
  const answer = $("#answer-choice").hidden ? $("#answer-text").value : $("#answer-choice").value;
  const status = $("#answer-status");
  status.textContent = "answering…";
  const response = await post("answer", { wait, answer });
  status.textContent = response.ok ? "answered; the run goes on" : `refused: ${await response.text()}`;
  status.className = response.ok ? "muted" : "error";
});
$("#wait-node").addEventListener("change", renderWaits);
$("#answer-choice").addEventListener("change", renderChoiceDescription);
$("#cancel").addEventListener("click", async () => {
  if (!confirm("Cancel this run? It can be resumed later.")) return;
  const response = await post("cancel");
  if (!response.ok) alert(await response.text());
});
$("#resume").addEventListener("click", async () => {
  const response = await post("resume");
  if (!response.ok) alert(await response.text());
});

loadGraph();
follow();
