"use strict";
// The runs list: fetched now and every two seconds.
const body = document.querySelector("#runs tbody");

function cell(text, className) {
  const td = document.createElement("td");
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

function duration(ms) {
  if (ms < 1000) return `${ms} ms`;
  const s = Math.round(ms / 100) / 10;
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

async function refresh() {
  try {
    const response = await fetch("/api/runs");
    if (!response.ok) throw new Error(await response.text());
    const runs = await response.json();
    body.replaceChildren();
    if (runs.length === 0) {
      const row = document.createElement("tr");
      row.append(cell("no runs yet", "muted"));
      body.append(row);
    }
    for (const run of runs) {
      const row = document.createElement("tr");
      row.dataset.run = run.id;
      const id = document.createElement("td");
      const link = document.createElement("a");
      link.href = `/runs/${encodeURIComponent(run.id)}`;
      link.textContent = run.id;
      id.append(link);
      const status = cell("");
      const badge = document.createElement("span");
      badge.className = `status ${run.status}`;
      badge.textContent = run.status;
      status.append(badge);
      row.append(id, cell(run.workflow), status, cell(String(run.steps)), cell(run.started),
        cell(duration(run.duration_ms)), cell(run.cost_usd == null ? "—" : `$${run.cost_usd.toFixed(4)}`));
      body.append(row);
    }
  } catch (error) {
    body.replaceChildren();
    const row = document.createElement("tr");
    row.append(cell(`could not load runs: ${error.message}`, "error"));
    body.append(row);
  }
}

refresh();
setInterval(refresh, 2000);
