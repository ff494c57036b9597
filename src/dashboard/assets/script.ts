/**
 * The dashboard's one script, served from /assets/dashboard.js (never inline, so the CSP can
 * forbid inline scripts). Everything works without it; it adds:
 * - live refresh: every `data-refresh` ms it fetches the page again and swaps each `[data-live]`
 *   region by id, unless the tab is hidden or the user is selecting or typing in that region;
 * - the backlog chart, from the `data-backlog` figure seen at each refresh.
 * It reads the fetched page with DOMParser and moves parsed nodes in; it never builds markup
 * from strings, so the server's escaping is all that stands between data and the DOM.
 */
export const SCRIPT = `"use strict";
(function () {
  var interval = Number(document.body.getAttribute("data-refresh")) || 0;
  var status = document.querySelector("[data-live-status]");
  var samples = [];
  var svgNs = "http://www.w3.org/2000/svg";

  function busy(region) {
    if (region.querySelector("input[type=checkbox]:checked")) return true;
    var active = document.activeElement;
    return !!(active && active !== document.body && region.contains(active) && /^(INPUT|SELECT|TEXTAREA)$/.test(active.tagName));
  }

  function drawBacklog() {
    var figure = document.getElementById("backlog-now");
    var chart = document.getElementById("backlog-chart");
    if (!figure || !chart) return;
    samples.push(Number(figure.getAttribute("data-backlog")) || 0);
    if (samples.length > 120) samples.shift();
    var line = chart.querySelector("polyline");
    var peak = Math.max.apply(null, samples.concat([1]));
    var step = samples.length > 1 ? 600 / (samples.length - 1) : 600;
    var points = samples.map(function (value, index) {
      return (index * step).toFixed(1) + "," + (118 - (value / peak) * 112).toFixed(1);
    });
    if (samples.length === 1) points.push("600," + points[0].split(",")[1]);
    line.setAttribute("points", points.join(" "));
  }

  function refresh() {
    if (document.hidden) return;
    fetch(location.href, { headers: { "x-firm-queue-refresh": "1" }, credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.text();
      })
      .then(function (text) {
        var fresh = new DOMParser().parseFromString(text, "text/html");
        document.querySelectorAll("[data-live][id]").forEach(function (region) {
          var replacement = fresh.getElementById(region.id);
          if (!replacement || busy(region)) return;
          region.replaceWith(document.adoptNode(replacement));
        });
        drawBacklog();
        if (status) { status.textContent = "live"; status.classList.remove("paused-refresh"); }
        document.dispatchEvent(new CustomEvent("firm-queue:refreshed"));
      })
      .catch(function () {
        if (status) { status.textContent = "offline"; status.classList.add("paused-refresh"); }
      });
  }

  drawBacklog();
  if (interval > 0) setInterval(refresh, interval);
})();
`;
