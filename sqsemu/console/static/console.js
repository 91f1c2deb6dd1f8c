/* sqsemu console: live updates, the queue filter, confirmations and extra attribute rows. Plain JavaScript, no
   dependencies, no build step. Pages work without it (forms post, links page); it only adds what needs a script.

   Live updates: a page whose <body> has data-live asks for its own URL with ?live=1 once a second and gets
   {"<part>": "<html>"}; each element with data-part="<part>" takes the new HTML when it changed. The server renders
   the parts with the same templates as the page, so there is one rendering of everything. A page answered to a form
   post (an error shown) names its own URL in data-live-url: the post's URL answers no GET. */
"use strict";

(() => {
  const INTERVAL_MS = 1000;
  const lastHtml = new Map();
  const status = document.getElementById("live-status");
  const filter = document.querySelector("[data-filter]");

  function setStatus(state, text) {
    if (!status) return;
    status.dataset.state = state;
    status.textContent = text;
  }

  function liveUrl() {
    const url = new URL(document.body.dataset.liveUrl || window.location.href, window.location.href);
    url.hash = "";
    url.searchParams.set("live", "1");
    return url;
  }

  /* Keep <details> that the user opened inside a part open across a swap (matched by their data-key). */
  function openKeys(element) {
    return new Set([...element.querySelectorAll("details[open][data-key]")].map((d) => d.dataset.key));
  }

  function reopen(element, keys) {
    for (const details of element.querySelectorAll("details[data-key]")) {
      if (keys.has(details.dataset.key)) details.open = true;
    }
  }

  function applyFilter() {
    if (!filter) return;
    const text = filter.value.trim().toLowerCase();
    for (const row of document.querySelectorAll(`${filter.dataset.filter} tr[data-name]`)) {
      row.hidden = text !== "" && !row.dataset.name.includes(text);
    }
  }

  async function refresh() {
    const response = await fetch(liveUrl(), {
      headers: { Accept: "application/json" },
      cache: "no-store",
      credentials: "same-origin",
    });
    if (response.redirected || response.status === 401) {
      window.location.reload(); // the session ended: the page will ask for the token
      return "stopped";
    }
    if (response.status === 404) {
      setStatus("gone", "deleted");
      return "gone";
    }
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const parts = await response.json();
    for (const [name, html] of Object.entries(parts)) {
      if (lastHtml.get(name) === html) continue;
      lastHtml.set(name, html);
      for (const element of document.querySelectorAll(`[data-part="${name}"]`)) {
        const keys = openKeys(element);
        element.innerHTML = html;
        reopen(element, keys);
      }
    }
    applyFilter();
    return "live";
  }

  async function loop() {
    let outcome = "live";
    if (!document.hidden) {
      try {
        outcome = await refresh();
        if (outcome === "live") setStatus("live", "live");
      } catch (error) {
        setStatus("offline", "offline");
      }
    }
    if (outcome !== "stopped") window.setTimeout(loop, INTERVAL_MS);
  }

  if (document.body.dataset.live) window.setTimeout(loop, INTERVAL_MS);

  if (filter) {
    filter.addEventListener("input", () => {
      applyFilter();
      const url = new URL(window.location.href);
      const text = filter.value.trim();
      if (text) url.searchParams.set("q", text);
      else url.searchParams.delete("q");
      window.history.replaceState(null, "", url);
    });
    applyFilter();
  }

  /* Forms with data-confirm ask first (purge, delete). */
  document.addEventListener("submit", (event) => {
    const message = event.target.dataset ? event.target.dataset.confirm : undefined;
    if (message && !window.confirm(message)) event.preventDefault();
  });

  document.addEventListener("click", (event) => {
    const add = event.target.closest("[data-add-row]");
    if (add) {
      const template = document.getElementById(add.dataset.addRow);
      const target = document.getElementById(add.dataset.target);
      if (template && target) target.append(template.content.cloneNode(true));
      return;
    }
    const copy = event.target.closest("[data-copy]");
    if (copy) {
      const source = document.querySelector(copy.dataset.copy);
      if (source && navigator.clipboard) {
        navigator.clipboard.writeText(source.textContent.trim()).then(() => {
          const label = copy.textContent;
          copy.textContent = "Copied";
          window.setTimeout(() => { copy.textContent = label; }, 1200);
        });
      }
    }
  });
})();
