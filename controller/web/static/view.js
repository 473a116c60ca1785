// mrc-fabric live view: polls /api/state and draws the fabric as SVG (no libraries, no build step).
"use strict";
const POLL_MS = 250;
const SVG = "http://www.w3.org/2000/svg";
const W = 1000, ROW = { spine: 70, leaf: 230, host: 400 }, H = 450;
let built = false, pos = {}, polls = 0;

function el(name, attrs, parent) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

function fmtRate(bps) {
  if (bps === null || bps === undefined) return "";
  if (bps >= 1e9) return (bps / 1e9).toFixed(2) + " Gb/s";
  if (bps >= 1e6) return (bps / 1e6).toFixed(2) + " Mb/s";
  if (bps >= 1e3) return (bps / 1e3).toFixed(1) + " kb/s";
  return bps.toFixed(0) + " b/s";
}

// Planes side by side (spines above leaves); hosts in one row below, linked to a leaf of every plane.
function layout(st) {
  const planes = st.planes || 1, colW = W / planes;
  for (let p = 1; p <= planes; p++) {
    for (const role of ["spine", "leaf"]) {
      const sws = st.switches.filter(s => s.plane === p && s.role === role);
      sws.forEach((s, i) => { pos[s.name] = { x: colW * (p - 1) + colW * (i + 1) / (sws.length + 1), y: ROW[role] }; });
    }
  }
  st.hosts.forEach((h, i) => { pos[h] = { x: W * (i + 1) / (st.hosts.length + 1), y: ROW.host }; });
}

function build(st) {
  const svg = document.getElementById("fabric");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.textContent = "";
  pos = {};
  layout(st);
  for (let p = 1; p <= st.planes; p++) {
    const t = el("text", { x: W / st.planes * (p - 1) + 8, y: 18, class: "plane-label" }, svg);
    t.textContent = `plane ${p}`;
    if (p > 1) el("line", { x1: W / st.planes * (p - 1), y1: 0, x2: W / st.planes * (p - 1), y2: ROW.leaf + 60,
                             stroke: "#cfd8dc", "stroke-dasharray": "4 4" }, svg);
  }
  const links = el("g", { id: "links" }, svg);
  for (const l of st.links) {
    const a = pos[l.a], b = pos[l.b];
    const g = el("g", { "data-link": l.id }, links);
    const line = el("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, class: "link state-unknown", "stroke-width": 3 }, g);
    line.appendChild(el("title", {})).textContent = l.id;
    // Labels sit near the lower end: left of a vertical link, and at different heights for links
    // leaving to the left and to the right, so the labels of crossing links do not share a spot.
    const lo = a.y > b.y ? a : b, hi = lo === a ? b : a;
    const dir = Math.sign(hi.x - lo.x), t = dir < 0 ? 0.22 : (dir > 0 ? 0.38 : 0.3);
    el("text", { x: lo.x + (hi.x - lo.x) * t + (dir > 0 ? 5 : -5), y: lo.y + (hi.y - lo.y) * t,
                 "text-anchor": dir > 0 ? "start" : "end", class: "load" }, g);
  }
  const nodes = el("g", { id: "nodes" }, svg);
  for (const s of st.switches) {
    const p = pos[s.name];
    const g = el("g", { class: `node ${s.role}`, "data-switch": s.name, transform: `translate(${p.x},${p.y})` }, nodes);
    el("rect", { x: -58, y: -16, width: 116, height: 32, rx: 5 }, g);
    el("text", { x: 0, y: -2, "text-anchor": "middle", class: "name" }, g).textContent = s.name;
    el("text", { x: 0, y: 11, "text-anchor": "middle", class: "stats" }, g);
  }
  for (const h of st.hosts) {
    const p = pos[h];
    const g = el("g", { class: "node host", "data-host": h, transform: `translate(${p.x},${p.y})` }, nodes);
    el("rect", { x: -30, y: -14, width: 60, height: 28, rx: 12 }, g);
    el("text", { x: 0, y: 4, "text-anchor": "middle", class: "name" }, g).textContent = h;
  }
  built = true;
}

function sum(obj) { return Object.values(obj || {}).reduce((a, b) => a + b, 0); }

function update(st) {
  if (!built || document.querySelectorAll("[data-switch]").length !== st.switches.length) build(st);
  document.getElementById("topo-name").textContent = `· ${st.topology}`;
  const maxBps = Math.max(1, ...st.links.map(l => l.bps || 0));
  const down = [];
  for (const l of st.links) {
    const g = document.querySelector(`[data-link="${CSS.escape(l.id)}"]`);
    if (!g) continue;
    g.setAttribute("data-state", l.state);
    g.setAttribute("data-since", l.since);
    const line = g.querySelector("line");
    line.setAttribute("class", `link state-${l.state}`);
    line.setAttribute("stroke-width", l.state === "dead" ? "3" : (2 + 8 * (l.bps || 0) / maxBps).toFixed(1));
    line.querySelector("title").textContent = `${l.id}: ${l.state}${l.bps !== null ? ", " + fmtRate(l.bps) : ""}`;
    g.querySelector("text").textContent = l.state === "dead" ? "DOWN" : fmtRate(l.bps);
    if (l.kind === "fabric" && l.state !== "up") down.push(l);
  }
  const tbody = document.querySelector("#switch-table tbody");
  tbody.textContent = "";
  for (const s of st.switches) {
    const g = document.querySelector(`[data-switch="${CSS.escape(s.name)}"]`);
    const trims = (s.congestion || {}).trimmed || 0, ecn = (s.congestion || {}).ecn_marked || 0;
    const qmax = Math.max(0, ...Object.values(s.qdepth || {}));
    const drops = sum(s.drops);
    g.setAttribute("class", `node ${s.role}${s.connected ? "" : " down"}`);
    g.querySelector(".stats").textContent = `drop ${drops} trim ${trims} ecn ${ecn} q ${qmax}`;
    const tr = document.createElement("tr");
    tr.setAttribute("data-row", s.name);
    const reasons = Object.entries(s.drops || {}).filter(([, v]) => v > 0).map(([k, v]) => `${k} ${v}`).join(", ");
    for (const [text, cls] of [[s.name, ""], [s.connected ? (s.converged ? "converged" : "connected") : "DOWN",
        s.connected ? "" : "bad"], [reasons || "0", ""], [trims, ""], [ecn, ""], [qmax, ""]]) {
      const td = document.createElement("td");
      td.textContent = text;
      if (cls) td.className = cls;
      tr.appendChild(td);
    }
    tbody.appendChild(tr);
  }
  const ul = document.getElementById("down-links");
  ul.textContent = "";
  for (const l of down) {
    const li = document.createElement("li");
    li.textContent = `${l.id}: ${l.state} since ${new Date(l.since * 1000).toLocaleTimeString()}`;
    li.className = "bad";
    ul.appendChild(li);
  }
  if (!down.length) ul.innerHTML = '<li class="none">none</li>';
  const pt = document.querySelector("#postcards tbody");
  if (st.postcards.length) {
    pt.textContent = "";
    for (const p of st.postcards.slice().reverse()) {
      const tr = document.createElement("tr");
      for (const t of [p.switch, `${p.ingress_port}→${p.egress_port}`, `${p.hop_latency_us} us`, p.queue_depth, p.packet]) {
        const td = document.createElement("td");
        td.textContent = t;
        tr.appendChild(td);
      }
      pt.appendChild(tr);
    }
  }
}

async function poll() {
  const status = document.getElementById("status");
  try {
    const r = await fetch("api/state", { cache: "no-store" });
    const st = await r.json();
    if (st.error) throw new Error(st.error);
    update(st);
    polls += 1;
    status.className = "";
    status.setAttribute("data-polls", polls);
    status.setAttribute("data-time", st.time);
    status.textContent = `live · ${new Date(st.time * 1000).toLocaleTimeString()}`;
  } catch (e) {
    status.className = "stale";
    status.textContent = `no answer from the controller (${e.message}); retrying`;
  }
  setTimeout(poll, POLL_MS);
}
poll();
